import { BootstrapContext, bootstrapApplication } from '@angular/platform-browser';
import { App } from './app/app';
import { config } from './app/app.config.server';
import { partsConfig } from './app/app.config.parts';
import { createPartRenderer } from './app/personal-part.server';

const bootstrap = (context: BootstrapContext) => bootstrapApplication(App, config, context);

export default bootstrap;

// The origin (server/) is a separate bundle with no Angular of its own for rendering: it renders
// through this bundle's copy of Angular, so the engine and the tokens it provides must come from here.
export { CommonEngine } from '@angular/ssr/node';
export { LOCALE_ID, REQUEST, REQUEST_CONTEXT, RESPONSE_INIT } from '@angular/core';
export { serverRoutes } from './app/app.routes.server';
// Personal parts (app/app.parts.ts): their declarations, which the origin reads at startup, and the
// render of one visitor's parts of a page, which it splices into that visitor's copy of the page.
export { personalParts } from './app/app.parts';
export const renderPart = createPartRenderer(partsConfig);
// The demo's API (src/api/): the origin answers /api/… with it, before the Host guard.
export { api } from './api/api';
