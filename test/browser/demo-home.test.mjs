// The demo's home page in Chromium: its Material form works once hydrated. About the demo's page,
// so it goes with it (docs/your-app.md, "Retiring the demo"); pages.test.mjs tests any app's pages.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SCREENSHOTS, appPageSession, waitForHydration } from '../helpers/browser.mjs';
import { site } from '../helpers/site.mjs';

const s = appPageSession();

describe('the demo home page in a real browser', () => {
  it('hydrates the prerendered home page and the form works', async () => {
    const response = await s.page.goto(`${s.origin.url}${site.page('/')}`);
    assert.equal(response.status(), 200);
    await waitForHydration(s.page);
    await s.page.getByLabel('First name').fill('Ada');
    await s.page.getByLabel('Last name').fill('Lovelace');
    await s.page.getByRole('button', { name: 'Submit' }).click();
    await s.page.getByRole('status').filter({ hasText: 'Hello, Ada Lovelace!' }).waitFor();
    await s.page.screenshot({ path: join(SCREENSHOTS, 'home.png') });
    assert.deepEqual(s.problems, []);
  });
});
