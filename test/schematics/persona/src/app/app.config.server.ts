import { mergeApplicationConfig, ApplicationConfig, TransferState, inject } from '@angular/core';
import { provideServerRendering, withRoutes } from '@angular/ssr';
import { appConfig } from './app.config';
import { serverRoutes } from './app.routes.server';
import { API_URL, API_URL_KEY } from './api';

const serverConfig: ApplicationConfig = {
  providers: [
    provideServerRendering(withRoutes(serverRoutes)),
    {
      provide: API_URL,
      useFactory: () => {
        const url = process.env['API_URL'] ?? 'http://127.0.0.1:3000';
        inject(TransferState).set(API_URL_KEY, url);
        return url;
      },
    },
  ],
};

export const config = mergeApplicationConfig(appConfig, serverConfig);
