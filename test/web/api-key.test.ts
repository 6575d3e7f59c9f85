import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { type TestBrowser, launchBrowser } from '../support/browser.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/** With API_KEY set, the shell still loads; the UI says what is missing and sends the key the user saves. */
const KEY = 'browser-api-key-0123456789';
let stack: TestStack;
let b: TestBrowser;
beforeAll(async () => {
  [stack, b] = await Promise.all([startTestStack({ queues: [], env: { API_KEY: KEY } }), launchBrowser()]);
});
afterAll(async () => {
  await b?.close();
  await stack?.stop();
});

describe('the web interface behind an API key', () => {
  it('asks for the key, keeps it in the browser, and then works, live updates included', async () => {
    onTestFailed(async () => {
      await b.screenshot('api-key-failed').catch(() => undefined);
    });
    const { page } = b;
    const keyField = () => page.getByLabel('API key', { exact: true }).and(page.locator('input'));
    await page.goto(`${stack.url}/`);
    await page.getByRole('alert').filter({ hasText: 'This server needs an API key. Enter it under Settings.' }).waitFor();

    await page.getByRole('link', { name: 'Settings' }).click();
    await keyField().fill('not-the-key');
    await page.getByRole('button', { name: 'Save key' }).click();
    await page.getByRole('link', { name: 'Libraries' }).click();
    await page.getByRole('alert').filter({ hasText: 'The API refused the API key saved in this browser. Check it under Settings.' }).waitFor();
    await b.screenshot('api-key-refused');

    await page.getByRole('link', { name: 'Settings' }).click();
    await keyField().fill(KEY);
    await page.getByRole('button', { name: 'Save key' }).click();
    // The key is never shown back.
    await expect(keyField().inputValue()).resolves.toBe('');
    await expect(keyField().getAttribute('placeholder')).resolves.toBe('A key is saved');
    // The event stream goes over fetch, with the key in its header (EventSource could not send one).
    const stream = page.waitForResponse((r) => r.url() === `${stack.url}/api/v1/jobs/stream`);
    await page.getByRole('link', { name: 'Libraries' }).click();
    await page.getByText('No libraries yet: add one above.').waitFor();
    expect((await stream).status()).toBe(200);
    await expect((await stream).request().headerValue('authorization')).resolves.toBe(`Bearer ${KEY}`);
    await expect(page.getByRole('alert').count()).resolves.toBe(0);
    await expect(page.getByText('Live updates').count()).resolves.toBe(0);
    expect(await page.evaluate<string | null>("localStorage.getItem('gristmill.apiKey')")).toBe(KEY);
    expect(await page.content()).not.toContain(KEY);
  });
});
