// The demo's dashboard in Chromium: rendered in the browser only, with the visits it counts there.
// About the demo's page, so it goes with it (docs/your-app.md, "Retiring the demo"); pages.test.mjs
// tests any app's client-only page, from load-paths.json.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SCREENSHOTS, appPageSession } from '../helpers/browser.mjs';
import { site } from '../helpers/site.mjs';

const s = appPageSession();

describe('the demo dashboard in a real browser', () => {
  it('renders in the browser: the visits counted there, its nav link current', async () => {
    const response = await s.page.goto(`${s.origin.url}${site.page('/dashboard')}`);
    assert.equal(response.status(), 200);
    assert.ok(
      !(await response.text()).includes('Rendered in the browser'),
      'the server rendered it',
    );
    await s.page.getByText('Rendered in the browser.').waitFor();
    assert.match(await s.page.locator('.visits').textContent(), /opened this dashboard once in/);
    assert.equal(
      await s.page.getByRole('link', { name: 'Dashboard' }).getAttribute('aria-current'),
      'page',
    );
    await s.page.screenshot({ path: join(SCREENSHOTS, 'dashboard.png') });
    assert.deepEqual(s.problems, []);
  });
});
