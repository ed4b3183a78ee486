// Which requests are the app's API's: `/api` and what is under it, however the request names it.

/** The paths the app's API is asked for; the fast path leaves them to the API's step. */
export const API_PATH = '/api';

/** How traces and logs name a request the API answered. */
export const API_ROUTE = `${API_PATH}/*`;

/**
 * Whether a path, or a request target as it came (a query after it), is the API's: `/api` or
 * under `/api/`. Allocates nothing: the fast path asks it of every request.
 */
export function isApiPath(target: string): boolean {
  if (!target.startsWith(API_PATH)) {
    return false;
  }
  const next = target.charAt(API_PATH.length);
  return next === '' || next === '/' || next === '?';
}
