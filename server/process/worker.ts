// A cluster worker's side of its primary (cluster.ts): its slot, what it says as it exits and the
// messages the two exchange. Apart from the primary so that a serving process's lifecycle
// (lifecycle.ts), which the primary's settings name, needs nothing of the primary itself.
import cluster from 'node:cluster';

/** Worker → primary: "my server is closed; tell me when you know". Primary → worker: "I know". */
export const EXITING = 'origin:exiting';
export const EXIT_OK = 'origin:exit-ok';
/** Primary → worker: told to stop twice, end your drain window now (lifecycle.ts). */
export const STOP_ACCEPTING = 'origin:stop-accepting';

const lastWords: (() => Promise<unknown>)[] = [];

/**
 * A message a worker sends its primary as it exits, once its server is closed and before it says
 * so (its final metrics): the channel keeps their order, so the primary has it before the exit.
 */
export function sayBeforeExiting(words: () => Promise<unknown>): void {
  lastWords.push(words);
}

/**
 * Exits the process. A cluster worker first waits for the primary to acknowledge: the primary may
 * have handed it a connection just before it saw the worker's server close, and a worker that exits
 * with that hand-off unread loses the connection (the client hangs). Node bounces such hand-offs
 * back to the primary as they are read; the acknowledgement comes after them on the same channel.
 */
export function exitProcess(code: number): void {
  if (!cluster.isWorker || !process.send) {
    process.exit(code);
  }
  setTimeout(() => process.exit(code), 1000).unref();
  process.on('message', (message) => {
    if (message === EXIT_OK) {
      // Sent once every earlier write on the channel (the bounced hand-offs) has gone out.
      process.send!('origin:bye', () => process.exit(code));
    }
  });
  void Promise.all(lastWords.map((words) => words().catch(() => undefined))).then((messages) => {
    for (const message of messages) {
      if (message !== undefined) {
        process.send!(message);
      }
    }
    process.send!(EXITING);
  });
}

/**
 * A worker's place among the primary's WORKERS, 1 to WORKERS, passed in its environment: a worker
 * that replaces another takes its slot, so per-worker metrics keep one series per slot however many
 * workers come and go.
 */
export const SLOT = 'ORIGIN_WORKER_SLOT';

/** This worker's slot; undefined in a process the origin's primary did not start (alone, or PM2's). */
export function workerSlot(): number | undefined {
  const slot = process.env[SLOT];
  return cluster.isWorker && slot ? Number(slot) : undefined;
}
