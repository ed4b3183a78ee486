/**
 * A reason the origin cannot start that a person must fix (a setting, a route's declaration): the
 * start stops with its message as one plain line, never a stack.
 */
export class StartupError extends Error {}
