/** A `.` or `..` segment: the guard refuses such paths, and no cache key may hold one. */
const DOT_SEGMENT = /(^|\/)\.\.?(\/|$)/;

export function hasDotSegment(path: string): boolean {
  return DOT_SEGMENT.test(path);
}

/** A last path segment with an extension asks for a file, never for a page. */
export const FILE_LIKE = /\.[^/]*$/;
