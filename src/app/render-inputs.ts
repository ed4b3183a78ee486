// renderInputs(), requestCookie(), cookieHeader(), cookieValue(): the helpers every app gets in its
// own src/app/render-inputs.ts, where ng new and ng add write their text. Their one source is the
// tests' app's copy, which the origin's tests run and which imports nothing from src/: change it
// there (schematics/parts.json, appFiles).
export * from '../../test/app/src/app/render-inputs';
