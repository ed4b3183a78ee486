// What METRICS_PORT adds to each response, in CPU time: the response timer (server/metrics/timings.ts)
// run on a million simulated responses, against the same loop without it. The end-to-end bench
// (`--variants origin,origin-metrics`) cannot resolve a difference this small on a shared machine.
// Run: node bench/metrics-cost.mjs (Node 24 strips the types of the .ts it imports).
import { EventEmitter } from 'node:events';
import { createTimings } from '../server/metrics/timings.ts';

const RESPONSES = 1_000_000;
const ROUNDS = 5;
const { timeResponse } = createTimings();

/** CPU nanoseconds per simulated response: an emitter that finishes, timed or not. */
function run(timed) {
  const start = process.cpuUsage();
  for (let i = 0; i < RESPONSES; i++) {
    const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: false });
    if (timed) timeResponse(res, 'fast-path', performance.now());
    res.emit('finish');
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / RESPONSES;
}

const costs = [];
for (let round = 1; round <= ROUNDS; round++) {
  const cost = run(true) - run(false);
  costs.push(cost);
  console.log(`round ${round}: ${cost.toFixed(0)} ns of CPU per timed response`);
}
costs.sort((a, b) => a - b);
console.log(`median: ${costs[Math.floor(ROUNDS / 2)].toFixed(0)} ns per response`);
