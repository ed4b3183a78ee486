/** A `.` or `..` segment: the guard refuses such paths, and no cache key may hold one. */
const DOT_SEGMENT = /(^|\/)\.\.?(\/|$)/;

export function hasDotSegment(path: string): boolean {
  return DOT_SEGMENT.test(path);
}
