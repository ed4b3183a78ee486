// addCacheGroups(): the helper every app gets in its own src/app/cache-groups.ts, where ng new and
// ng add write its text. Its one source is the tests' app's copy, which the origin's tests run and
// which imports nothing from src/: change it there (schematics/parts.json, appFiles).
export * from '../../test/app/src/app/cache-groups';
