// Types for the app's server bundle (dist/server/main.server.mjs), which the origin imports at run
// time instead of bundling a second copy of the app (the build marks the import external). Declared
// from the packages, not from an app's source, so the origin type-checks with any app in src/ (or
// the tests' own app in test/app) as long as its main.server exports these.
import type { ApplicationRef } from '@angular/core';
import type { BootstrapContext } from '@angular/platform-browser';
import type { ServerRoute } from '@angular/ssr';

declare const bootstrap: (context: BootstrapContext) => Promise<ApplicationRef>;
export default bootstrap;
export { CommonEngine } from '@angular/ssr/node';
export { RESPONSE_INIT } from '@angular/core';
/** Absent from an app that added the origin before renders saw their request (ng add adds it). */
export declare const REQUEST: typeof import('@angular/core').REQUEST | undefined;
/** Absent from an app that added the origin before requestCookie() asked it by name (ng add adds it). */
export declare const REQUEST_CONTEXT: typeof import('@angular/core').REQUEST_CONTEXT | undefined;
/** Needed by a localized build only: each locale's renders get its own (an older main.server lacks it). */
export declare const LOCALE_ID: typeof import('@angular/core').LOCALE_ID | undefined;
export declare const serverRoutes: ServerRoute[];
/**
 * The app's own API, when it has one (the demo's src/api/): the origin answers `/api/…` with it
 * before the Host guard (app-api/api-step.ts). A web-standard handler; null: not its request.
 */
export declare const api: ((request: Request) => Promise<Response | null>) | undefined;
/**
 * The app's personal parts (src/app/personal-part.ts): what each one's render may see, how long a
 * visitor's part may be kept; and what renders them. Both absent from an app without parts.
 */
export declare const personalParts: unknown;
export declare const renderPart: import('./pages/engine.ts').PartEngine | undefined;
