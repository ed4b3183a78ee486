import {
  HttpErrorResponse,
  HttpHeaders,
  type HttpInterceptorFn,
  HttpResponse,
  provideHttpClient,
  withInterceptors,
} from '@angular/common/http';
import { DOCUMENT, type EnvironmentProviders, inject } from '@angular/core';
import { from, of, switchMap, throwError } from 'rxjs';
import { api } from '../api/api';

/**
 * For unit tests: HttpClient answered by the demo's own API handler (src/api/) in the test's
 * process, the same code the origin mounts, instead of canned answers. A URL outside `/api/` fails
 * as an unreachable server does (status 0). As a browser does for its own origin, the request
 * carries the document's cookies.
 */
export function provideApiInProcess(): EnvironmentProviders {
  return provideHttpClient(withInterceptors([inProcess]));
}

const inProcess: HttpInterceptorFn = (request) => {
  const headers = request.headers.has('cookie')
    ? request.headers
    : request.headers.set('cookie', inject(DOCUMENT).cookie);
  const body = request.serializeBody();
  return from(
    answerOf(
      request.urlWithParams,
      request.method,
      headers,
      typeof body === 'string' ? body : null,
    ),
  ).pipe(
    switchMap((answer) =>
      answer instanceof HttpErrorResponse ? throwError(() => answer) : of(answer),
    ),
  );
};

/** The API's answer as HttpClient gives it: a response, or the error it fails with. */
async function answerOf(
  url: string,
  method: string,
  headers: HttpHeaders,
  body: string | null,
): Promise<HttpResponse<unknown> | HttpErrorResponse> {
  const response = await api(
    new Request(new URL(url, 'http://localhost'), {
      method,
      body,
      headers: headers
        .keys()
        .map((name): [string, string] => [name, headers.getAll(name)!.join(', ')]),
    }),
  );
  if (response === null) {
    return new HttpErrorResponse({ status: 0, statusText: 'Unknown Error', url });
  }
  const text = await response.text();
  const json: unknown = text === '' ? null : JSON.parse(text);
  const init = {
    status: response.status,
    headers: new HttpHeaders(Object.fromEntries(response.headers)),
    url,
  };
  return response.ok
    ? new HttpResponse({ ...init, body: json })
    : new HttpErrorResponse({ ...init, error: json });
}
