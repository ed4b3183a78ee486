import { AsyncLocalStorage } from 'node:async_hooks';
import { type Context, type ContextManager, ROOT_CONTEXT } from '@opentelemetry/api';

/**
 * OpenTelemetry's active context, kept in an AsyncLocalStorage the origin's tracing channels bind
 * (`channel.start.bindStore`): the span a channel's message starts is active for the work it
 * traces, as `context.with` would make it. `@opentelemetry/context-async-hooks` keeps its store
 * private, so no channel could bind it.
 */
export class ChannelContextManager implements ContextManager {
  readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(context, () => fn.apply(thisArg, args));
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') {
      return target;
    }
    const fn = target as (...args: unknown[]) => unknown;
    const run = (thisArg: unknown, args: unknown[]) =>
      this.with(context, () => fn.apply(thisArg, args));
    return function (this: unknown, ...args: unknown[]) {
      return run(this, args);
    } as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}
