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
  // visitor and throws see the same inputs and wait as long: rendered together, then each alone
  // when throws fails. Their 5 s is room for both renders on a loaded CI machine, where the
  // default 300 ms once ran out (the tests' figure is the slow part's timeout, not theirs).
  visitor: { component: VisitorPart, cookies: ['sid'], maxAge: 30, timeoutMs: 5000 },
  slow: { component: SlowPart, cookies: ['sid'], timeoutMs: 100 },
  throws: { component: ThrowsPart, cookies: ['sid'], timeoutMs: 5000 },
};
