/** What a process does when told to stop, to reload, or when it fails. */
export interface ProcessEvents {
  /**
   * SIGTERM or SIGINT: stop taking work, finish what is in flight, exit. Called for every such
   * signal: a second one may hurry the stop (lifecycle.ts), where Node's default would kill.
   */
  stop(reason: string): void;
  /** SIGHUP: empty the render cache (a cluster primary passes it on to its workers). */
  hangup(): void;
  /** An uncaught exception or unhandled rejection: the process may be in a bad state. */
  crash(kind: string, error: unknown): void;
}

/**
 * The one place the origin listens to process signals and fatal errors, for a single process, a
 * cluster worker and a cluster primary alike. Installed once per process, at startup.
 */
export function handleProcessEvents(events: ProcessEvents): void {
  process.on('SIGTERM', () => events.stop('SIGTERM'));
  process.on('SIGINT', () => events.stop('SIGINT'));
  process.on('SIGHUP', () => events.hangup());
  process.on('uncaughtException', (error) => events.crash('uncaught exception', error));
  process.on('unhandledRejection', (error) => events.crash('unhandled rejection', error));
}
