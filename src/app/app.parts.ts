import type { PersonalParts } from './personal-part';
import { VisitorGreeting } from './visitor-greeting';

/**
 * The app's personal parts (personal-part.ts): given to providePersonalParts() in app.config.ts
 * and app.config.parts.ts, and exported by main.server.ts, where the origin reads what each one
 * sees of the request (cookies, headers), how long it may reuse a visitor's render and how long it
 * waits for one.
 */
export const personalParts: PersonalParts = {
  // The product page's greeting and cart count: the `sid` session only, reused a minute for the
  // same visitor (the API revalidates its group when the cart changes).
  greeting: { component: VisitorGreeting, cookies: ['sid'], maxAge: 60 },
};
