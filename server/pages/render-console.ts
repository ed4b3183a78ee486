import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';
import type { Logger } from 'pino';

/** Console output written during one render (the app's ErrorHandler writes there). */
export interface ConsoleCapture {
  lines: string[];
  /** How many of them were console.error: Angular's ErrorHandler reports a failed page there. */
  errors: number;
}

const perRequest = new AsyncLocalStorage<ConsoleCapture>();

/**
 * Sends console.error/warn (Angular's ErrorHandler, Beasties, the engine) to the structured log as
 * one line each. During a render they are collected instead, so the request is logged once with
 * everything that went wrong in it (see errorHandler and common-engine-pages).
 */
export function routeConsoleToLog(log: Logger): void {
  const route =
    (level: 'error' | 'warn') =>
    (...args: unknown[]) => {
      const message = format(...args);
      const collected = perRequest.getStore();
      if (collected) {
        collected.lines.push(message);
        collected.errors += level === 'error' ? 1 : 0;
      } else {
        log[level](message);
      }
    };
  console.error = route('error');
  console.warn = route('warn');
}

/** Runs `handle` collecting the console output it causes into `collected`. Only renders pay for it. */
export function collectConsole<T>(collected: ConsoleCapture, handle: () => Promise<T>): Promise<T> {
  return perRequest.run(collected, handle);
}
