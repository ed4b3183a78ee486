// Types for the app's server bundle (dist/server/main.server.mjs), which the origin imports at run
// time instead of bundling a second copy of the app (the build marks the import external).
export { default } from '../src/main.server';
export * from '../src/main.server';
