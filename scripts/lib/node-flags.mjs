// The flags the origin's Node process runs with. package.json's serve:ssr and the Dockerfile's CMD
// spell them out (test/tools/node-flags.test.mjs keeps the three in step); the bench gives them to
// every Node variant, so that its rounds compare servers rather than how long each sat idle.

/**
 * `--no-memory-reducer`: once a process has been idle for a minute or two, V8's memory reducer
 * shrinks its heap and then lets it grow only slowly until it is back near its old size. Measured
 * (pinned, 150 s idle after a 20-s warm-up, then 4 s of `/products/N`): the first run cost 1.49x
 * the origin's busy CPU per render (6,477 against 4,340 µs with the flag), the ceiling alike
 * (6,107); in another run the origin stayed in slow growth for the next run too (a mark-compact
 * every 250 ms, 5,525 µs against the ceiling's 4,386). The price: an idle process keeps the heap its
 * last load grew (~230 MB committed here) instead of returning to ~55 MB.
 */
export const NODE_FLAGS = ['--no-memory-reducer'];
