import {
  HttpErrorResponse,
  HttpHeaders,
  type HttpInterceptorFn,
  HttpResponse,
  provideHttpClient,
  withInterceptors,
} from '@angular/common/http';
import type { EnvironmentProviders } from '@angular/core';
import { from, of, switchMap, throwError } from 'rxjs';
import { api } from '../api/api';

/**
 * For unit tests: HttpClient answered by the demo's own API handler (src/api/) in the test's
 * process, the same code the origin mounts, instead of canned answers. A URL outside `/api/` fails
 * as an unreachable server does (status 0).
 */
export function provideApiInProcess(): EnvironmentProviders {
  return provideHttpClient(withInterceptors([inProcess]));
}

const inProcess: HttpInterceptorFn = (request) =>
  from(answerOf(request.urlWithParams, request.method, request.headers)).pipe(
    switchMap((answer) =>
      answer instanceof HttpErrorResponse ? throwError(() => answer) : of(answer),
    ),
  );

/** The API's answer as HttpClient gives it: a response, or the error it fails with. */
async function answerOf(
  url: string,
  method: string,
  headers: HttpHeaders,
): Promise<HttpResponse<unknown> | HttpErrorResponse> {
  const response = await api(
    new Request(new URL(url, 'http://localhost'), {
      method,
      headers: headers
        .keys()
        .map((name): [string, string] => [name, headers.getAll(name)!.join(', ')]),
    }),
  );
  if (response === null) {
    return new HttpErrorResponse({ status: 0, statusText: 'Unknown Error', url });
  }
  const text = await response.text();
  const body: unknown = text === '' ? null : JSON.parse(text);
  const init = {
    status: response.status,
    headers: new HttpHeaders(Object.fromEntries(response.headers)),
    url,
  };
  return response.ok
    ? new HttpResponse({ ...init, body })
    : new HttpErrorResponse({ ...init, error: body });
}
