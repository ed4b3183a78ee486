// The one polling loop of the tests: scripts/lib/wait.mjs, where the tools that wait (a rolling
// deploy's) find it too, since tools never import test code.
export { waitFor } from '../../scripts/lib/wait.mjs';
