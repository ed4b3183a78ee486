// Where things are in the project, for the tools (bench/, scripts/) and the tests alike.
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '../..');
/** The app's own build (src/): what the tools measure. */
export const APP_DIST = join(ROOT, 'dist');
/** The build of the origin's tests' own app (test/app), so they pass whatever app is in src/. */
export const TEST_APP_DIST = join(ROOT, 'dist-test');
/** The same app built in its three locales (`ng build test-app --configuration localized`). */
export const TEST_APP_I18N_DIST = join(ROOT, 'dist-test-i18n');
