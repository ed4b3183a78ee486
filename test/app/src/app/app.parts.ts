import type { PersonalParts } from './personal-part';
import { SlowPart } from './parts/slow';
import { ThrowsPart } from './parts/throws';
import { VisitorPart } from './parts/visitor';

/**
 * The personal parts of the tests' app (the `parts/:id` page): given to providePersonalParts() in
 * app.config.ts and app.config.parts.ts, and exported by main.server.ts, where the origin reads
 * their declarations.
 */
export const personalParts: PersonalParts = {
  visitor: { component: VisitorPart, cookies: ['sid'], maxAge: 30 },
  slow: { component: SlowPart, cookies: ['sid'], timeoutMs: 100 },
  throws: { component: ThrowsPart, cookies: ['sid'] },
};
