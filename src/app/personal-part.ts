// PersonalPart and providePersonalParts(): the personal parts every app gets in its own
// src/app/personal-part.ts, where ng new and ng add write its text. Its one source is the tests'
// app's copy, which the origin's tests run and which imports nothing from src/: change it there
// (schematics/parts.json, appFiles).
export * from '../../test/app/src/app/personal-part';
