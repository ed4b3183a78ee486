// createPartRenderer(): the server bundle's renderPart, in every app's own
// src/app/personal-part.server.ts, where ng new and ng add write its text. Its one source is the
// tests' app's copy, which the origin's tests run and which imports nothing from src/: change it
// there (schematics/parts.json, appFiles).
export * from '../../test/app/src/app/personal-part.server';
