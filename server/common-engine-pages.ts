import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RenderMode } from '@angular/ssr';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type * as AppServerBundle from './main.server.mjs';
import type { CriticalCssMode } from './config';
import { createCriticalCss } from './critical-css';
import type { RenderLimiter } from './render-limiter';
import { collectConsole } from './request-console';
import { createRouteLookup } from './render-modes';
import { requestOrigin } from './request-guard';
import { throttledWarning } from './throttled-log';

export interface CommonEnginePagesOptions {
  /** The app's server bundle (dist/server/main.server.mjs): bootstrap, engine and tokens. */
  app: typeof AppServerBundle;
  browserDir: string;
  serverDir: string;
  allowedHosts: readonly string[];
  renderTimeoutMs: number;
  criticalCss: CriticalCssMode;
  /** Bounds the renders running and waiting (shared with the health endpoint, which reports it). */
  limiter: RenderLimiter;
  log: Logger;
}

const HTML = 'text/html; charset=utf-8';

/**
 * Renders pages with CommonEngine in production. Each route's render mode comes from the app's
 * server routes: client-only routes get the client-side shell, the rest are rendered (CommonEngine
 * itself answers prerendered routes from their files). Renders are bounded in number and in time:
 * a render that takes too long is answered with the client-side shell, which the browser renders.
 */
export function createCommonEnginePages(options: CommonEnginePagesOptions): Middleware {
  const { app, browserDir, serverDir, log } = options;
  const engine = new app.CommonEngine({ allowedHosts: [...options.allowedHosts] });
  const documentFilePath = join(serverDir, 'index.server.html');
  const lookupRoute = createRouteLookup(app.serverRoutes);
  const { limiter } = options;
  const warnTimeout = throttledWarning(log, 'render timed out: answered with the client-side shell');
  // Compiled at startup (the default): ~2 ms less per render than CommonEngine's Beasties pass.
  const inlineCompiledCss = options.criticalCss === 'compiled' ? createCriticalCss(browserDir) : (html: string) => html;
  // Read once: the build never changes under a running server.
  const clientShell = readFileSync(join(browserDir, 'index.csr.html'));

  return async (ctx) => {
    const route = lookupRoute(ctx.path);
    ctx.set('Content-Type', HTML);

    if (route.renderMode === RenderMode.Client) {
      ctx.status = route.status ?? 200;
      ctx.body = clientShell;
      return;
    }

    // The app may set the status (a 404 page does) through RESPONSE_INIT while it renders.
    const responseInit: ResponseInit = { status: route.status, headers: route.headers };
    // One controller per request, aborted by the deadline or by the client leaving; its timer is
    // cleared as soon as the render settles (AbortSignal.timeout would keep one per render alive
    // for the whole timeout, and AbortSignal.any adds weak-ref bookkeeping per render).
    const controller = new AbortController();
    const { signal } = controller;
    const deadline = setTimeout(() => controller.abort(TIMED_OUT), options.renderTimeoutMs);
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) {
        controller.abort(CLIENT_GONE);
      }
    });
    // What the app writes to the console while rendering (Angular's ErrorHandler) belongs to this
    // request's log line, not to lines of its own.
    const consoleOutput: string[] = [];
    const rendering = limiter.run(
      () =>
        collectConsole(consoleOutput, () => engine.render({
          bootstrap: app.default,
          documentFilePath,
          publicPath: browserDir,
          // The origin the guard parsed and allowed, then the request target: nothing else of the
          // headers (an extra port, path or query in Host) can change the page rendered.
          url: `${requestOrigin(ctx)}${ctx.path}${ctx.search}`,
          providers: [{ provide: app.RESPONSE_INIT, useValue: responseInit }],
          inlineCriticalCss: options.criticalCss === 'per-request',
        })),
      signal,
    );

    let html: string;
    try {
      html = inlineCompiledCss(await untilAborted(rendering, signal));
    } catch (error) {
      if (!signal.aborted || error !== signal.reason) {
        // The render failed (500, logged with the app's console output), or the queue is full (503).
        throw Object.assign(error as object, { consoleOutput });
      }
      if (signal.reason === TIMED_OUT) {
        warnTimeout();
        ctx.status = 200;
        ctx.set('Cache-Control', 'no-store');
        ctx.body = clientShell;
      }
      // Otherwise the client left: nothing to answer.
      return;
    } finally {
      clearTimeout(deadline);
    }
    if (consoleOutput.length > 0) {
      log.warn({ url: ctx.url, console: consoleOutput }, 'the app wrote to the console while rendering');
    }
    ctx.status = responseInit.status ?? 200;
    if (responseInit.headers) {
      for (const [name, value] of new Headers(responseInit.headers)) {
        ctx.set(name, value);
      }
    }
    // A Buffer body spares Koa a regex and a byte count over the whole page.
    ctx.body = Buffer.from(html);
  };
}

/** Why a render was given up; compared by identity. */
const TIMED_OUT = new Error('render timed out');
const CLIENT_GONE = new Error('client closed the connection');

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts. A render that
 * is abandoned this way still runs to its end (Angular cannot cancel one) and holds its limiter
 * slot until then; its late failure is expected and must not become an unhandled rejection.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
