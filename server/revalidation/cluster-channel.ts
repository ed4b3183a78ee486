// Revalidation between the workers of one cluster (WORKERS>1), without Redis: a worker sends the
// message to the primary over its IPC channel, and the primary relays it to every other worker.
import type { Worker } from 'node:cluster';
import type { RevalidationChannel, RevalidationMessage } from './revalidator.ts';

/** The IPC envelope: a typed object, so that the exit handshake's strings and anything else pass by. */
interface Envelope {
  type: typeof REVALIDATE;
  message: RevalidationMessage;
}

const REVALIDATE = 'origin:revalidate';

function isEnvelope(value: unknown): value is Envelope {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === REVALIDATE &&
    typeof (value as { message?: unknown }).message === 'object'
  );
}

/** A worker's channel: publishes through the primary, hears what other workers published. */
export function clusterChannel(): RevalidationChannel {
  return {
    name: 'cluster',
    publish(message) {
      return new Promise((resolve, reject) => {
        if (!process.send || !process.connected) {
          reject(new Error('no IPC channel to the primary'));
          return;
        }
        const envelope: Envelope = { type: REVALIDATE, message };
        process.send(envelope, undefined, {}, (error) => (error ? reject(error) : resolve()));
      });
    },
    subscribe(onMessage) {
      process.on('message', (value) => {
        if (isEnvelope(value)) {
          // The revalidator checks the message itself: the shape here is only the envelope's.
          onMessage(value.message);
        }
      });
    },
  };
}

/** A send to a worker that is going away: nothing to do about it. */
function ignoreError(): void {
  return undefined;
}

/**
 * The primary's part: relays a worker's revalidation to every other worker. Returns false for any
 * other message, which the primary handles as before.
 */
export function relayRevalidation(
  from: Worker,
  value: unknown,
  workers: Iterable<Worker>,
): boolean {
  if (!isEnvelope(value)) {
    return false;
  }
  for (const worker of workers) {
    if (worker !== from && worker.isConnected()) {
      // A worker exiting meanwhile misses nothing it needs (its cache goes with it): the callback
      // takes the error that would otherwise be an unhandled 'error' event in the primary.
      worker.send(value, undefined, {}, ignoreError);
    }
  }
  return true;
}
