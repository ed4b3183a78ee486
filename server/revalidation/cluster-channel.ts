// Revalidation between the workers of one cluster (WORKERS>1), without Redis: a worker sends the
// message to the primary over its IPC channel, the primary relays it to every other worker, each
// says when it applied it, and the primary tells the sender once all of them did.
import type { Worker } from 'node:cluster';
import type { Published, RevalidationChannel, RevalidationMessage } from './revalidator.ts';

/** The IPC envelopes: typed objects, so that the exit handshake's strings and anything else pass by. */
type Envelope =
  | { type: typeof REVALIDATE; message: RevalidationMessage }
  | { type: typeof APPLIED; id: string }
  | { type: typeof ALL_APPLIED; id: string; applied: number };

/** Worker → primary → other workers: a revalidation. */
const REVALIDATE = 'origin:revalidate';
/** A worker → the primary: it applied the revalidation `id`. */
const APPLIED = 'origin:revalidate-applied';
/** The primary → the sender: `applied` workers (all it relayed to) applied `id`. */
const ALL_APPLIED = 'origin:revalidate-all-applied';

function isEnvelope(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const { type, message, id } = value as { type?: unknown; message?: unknown; id?: unknown };
  return type === REVALIDATE
    ? typeof message === 'object' && message !== null
    : (type === APPLIED || type === ALL_APPLIED) && typeof id === 'string';
}

/** Waits for the primary's word, by message id; bounded by each waiter's signal. */
const confirmations = new Map<string, (applied: number) => void>();

/** A worker's channel: publishes through the primary, hears what other workers published. */
export function clusterChannel(): RevalidationChannel {
  return {
    name: 'cluster',
    publish(message) {
      return new Promise<Published>((resolve, reject) => {
        if (!process.send || !process.connected) {
          reject(new Error('no IPC channel to the primary'));
          return;
        }
        let confirmed: number | undefined;
        const wake = new Set<() => void>();
        // Registered before sending: the primary may answer before send's callback runs.
        confirmations.set(message.id, (applied) => {
          confirmed = applied;
          wake.forEach((done) => done());
        });
        const applied = (signal: AbortSignal) =>
          new Promise<number>((done) => {
            const finish = () => {
              confirmations.delete(message.id);
              done(confirmed ?? 0);
            };
            if (confirmed !== undefined || signal.aborted) {
              finish();
              return;
            }
            wake.add(finish);
            signal.addEventListener('abort', finish, { once: true });
          });
        const envelope: Envelope = { type: REVALIDATE, message };
        process.send(envelope, undefined, {}, (error) =>
          error ? reject(error) : resolve({ applied }),
        );
      });
    },
    subscribe(onMessage) {
      process.on('message', (value) => {
        if (!isEnvelope(value)) {
          return;
        }
        if (value.type === REVALIDATE) {
          // The revalidator checks the message itself: the shape here is only the envelope's.
          onMessage(value.message);
          const id = (value.message as { id?: unknown }).id;
          if (typeof id === 'string' && process.send && process.connected) {
            process.send({ type: APPLIED, id } satisfies Envelope, undefined, {}, ignoreError);
          }
        } else if (value.type === ALL_APPLIED) {
          confirmations.get(value.id)?.(value.applied);
        }
      });
    },
  };
}

/** A send to a worker that is going away: nothing to do about it. */
function ignoreError(): void {
  return undefined;
}

/** What the primary waits for: the workers a revalidation went to that have not said they applied it. */
interface Relayed {
  from: Worker;
  waiting: Set<Worker>;
  applied: number;
  timer: NodeJS.Timeout;
}

/** The primary forgets a relay after this: a worker that never answers (it exited) holds nothing. */
const RELAY_MEMORY_MS = 5000;

/**
 * The primary's part: relays a worker's revalidation to every other worker and tells the sender
 * once they applied it. Returns false for any other message, which the primary handles as before.
 */
export function createRevalidationRelay(): (
  from: Worker,
  value: unknown,
  workers: Iterable<Worker>,
) => boolean {
  const relayed = new Map<string, Relayed>();
  const tell = (id: string, entry: Relayed) => {
    clearTimeout(entry.timer);
    relayed.delete(id);
    if (entry.from.isConnected()) {
      const envelope: Envelope = { type: ALL_APPLIED, id, applied: entry.applied };
      entry.from.send(envelope, undefined, {}, ignoreError);
    }
  };
  return (from, value, workers) => {
    if (!isEnvelope(value)) {
      return false;
    }
    if (value.type === APPLIED) {
      const entry = relayed.get(value.id);
      if (entry?.waiting.delete(from)) {
        entry.applied++;
        if (entry.waiting.size === 0) {
          tell(value.id, entry);
        }
      }
      return true;
    }
    if (value.type !== REVALIDATE) {
      return true;
    }
    const id = (value.message as { id?: unknown }).id;
    const waiting = new Set<Worker>();
    for (const worker of workers) {
      if (worker !== from && worker.isConnected()) {
        // A worker exiting meanwhile misses nothing it needs (its cache goes with it): the callback
        // takes the error that would otherwise be an unhandled 'error' event in the primary.
        worker.send(value, undefined, {}, ignoreError);
        waiting.add(worker);
      }
    }
    if (typeof id === 'string' && !relayed.has(id)) {
      const entry: Relayed = {
        from,
        waiting,
        applied: 0,
        timer: setTimeout(() => relayed.delete(id), RELAY_MEMORY_MS),
      };
      entry.timer.unref();
      relayed.set(id, entry);
      if (waiting.size === 0) {
        tell(id, entry);
      }
    }
    return true;
  };
}
