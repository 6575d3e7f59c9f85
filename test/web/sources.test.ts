import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { type TestBrowser, launchBrowser } from '../support/browser.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { FakeDocsSite } from '../../fakes/fake-docs-site.js';
import { FakeRegistries } from '../../fakes/fake-registries.js';
import { forgetRegistryEndpoints } from '../../docindex/sources/registries/index.js';

/**
 * The web interface's new sources end to end, in headless Chromium against one stack: packages (npm here, from a
 * fake registry that npm's own `registry` setting points at) and documentation sites added from the form, their
 * rows, refresh schedules, on-demand libraries and a project's dependencies read from its lockfile.
 */
let stack: TestStack;
let registries: FakeRegistries;
let docsSite: FakeDocsSite;
let b: TestBrowser;
const savedEnv = { ...process.env };
const siteUrl = () => `${docsSite.url}/docs/`;

const NPM_LIB = '/npm/widget-kit';
const README = (name: string) => `# ${name}\n\n${name} renders widgets. Call \`${name}.mount(root)\` to start.\n\n## Install\n\n\`\`\`sh\nnpm install ${name}\n\`\`\`\n`;

beforeAll(async () => {
  [registries, docsSite] = await Promise.all([FakeRegistries.start(), FakeDocsSite.start()]);
  // A closed port: the package's archive is read instead of its repository.
  const repository = 'https://127.0.0.1:9/acme/widget-kit.git';
  for (const v of ['1.1.0', '1.2.0']) await registries.publish('npm', 'widget-kit', v, { 'README.md': README('widget-kit') }, { repository });
  await registries.publish('npm', 'gadget-lib', '0.9.0', { 'README.md': README('gadget-lib') });
  await registries.publish('npm', 'cog-kit', '2.0.0', { 'README.md': README('cog-kit') });
  for (const v of ['3.0.0', '3.1.0']) await registries.publish('npm', 'sprocket', v, { 'README.md': README('sprocket') });
  // npm's, pip's and cargo's own settings, pointed at the fake: the server reads registries only through them.
  Object.assign(process.env, registries.npmEnv(), registries.pipEnv(), { CARGO_HOME: registries.cargoHome() });
  forgetRegistryEndpoints();
  [stack, b] = await Promise.all([startTestStack({ env: { INDEX_ON_DEMAND: 'true' } }), launchBrowser()]);
});
afterAll(async () => {
  await b?.close();
  await stack?.stop();
  await Promise.all([registries?.close(), docsSite?.close()]);
  process.env = savedEnv;
  forgetRegistryEndpoints();
});

function screenshotOnFailure(name: string): void {
  onTestFailed(async () => {
    await b.screenshot(`${name}-failed`).catch(() => undefined);
  });
}

const unexpectedErrors = () => b.pageErrors.filter((e) => !e.startsWith('Failed to load resource'));

/** Clicks Add library and answers the JSON body the form sent, and the API's status and body. */
async function submitAddForm(page: Page): Promise<{ sent: unknown; status: number; answer: { code?: string; library?: { id: string } } }> {
  const isCreate = (r: Request) => new URL(r.url()).pathname === '/api/v1/libs' && r.method() === 'POST';
  const [request, response] = await Promise.all([
    page.waitForRequest(isCreate),
    page.waitForResponse((r) => isCreate(r.request())),
    page.getByRole('button', { name: 'Add library' }).click(),
  ]);
  return { sent: request.postDataJSON(), status: response.status(), answer: (await response.json()) as { code?: string } };
}

describe('new sources in the web interface', () => {
  // Passes on its own: the fields and the request bodies are the UI's.
  it('offers the six sources, each with its own field, and sends what the API takes', async () => {
    screenshotOnFailure('sources-form');
    const { page } = b;
    await page.goto(`${stack.url}/`);
    const add = page.getByRole('region', { name: 'Add a library' });
    await expect(add.getByLabel('Repository URL').getAttribute('placeholder')).resolves.toBe('https://github.com/owner/repo');

    await add.getByRole('radio', { name: 'Package from a registry' }).check();
    const registry = add.getByRole('combobox', { name: 'Registry' });
    const name = add.getByRole('textbox', { name: 'Package name', exact: true });
    await expect(registry.inputValue()).resolves.toBe('npm');
    const placeholders: Record<string, string | null> = {};
    for (const r of ['npm', 'pypi', 'crates']) {
      await registry.selectOption(r);
      placeholders[r] = await name.getAttribute('placeholder');
    }
    expect(placeholders).toEqual({ npm: 'fastify or @scope/name', pypi: 'requests', crates: 'tokio' });
    await add.getByText('More options').click();
    await expect(add.getByLabel(/^Branch/).count(), 'a package has no branch').resolves.toBe(0);
    await expect(add.getByRole('combobox', { name: /^Refresh/ }).locator('option').allTextContents()).resolves.toContain('Every 6 hours');

    // A package with its refresh settings, not indexed yet.
    await registry.selectOption('npm');
    await name.fill('widget-kit');
    await add.getByRole('combobox', { name: /^Refresh/ }).selectOption('6h');
    await add.getByRole('textbox', { name: /^Version policy/ }).fill('minors:3');
    await add.getByRole('checkbox', { name: 'Index it now' }).uncheck();
    await b.screenshot('sources-form-package');
    const npm = await submitAddForm(page);
    expect(npm.sent).toEqual({ source: 'npm', sourceUrl: 'widget-kit', autoIndex: false, refreshEvery: '6h', versionPolicy: 'minors:3' });

    // A documentation site: its URL, and no version policy (a site has no versions).
    await add.getByRole('radio', { name: 'Documentation site' }).check();
    const site = add.getByRole('textbox', { name: 'Site URL', exact: true });
    await expect(site.getAttribute('type')).resolves.toBe('url');
    await expect(add.getByRole('textbox', { name: /^Version policy/ }).count()).resolves.toBe(0);
    await site.fill(siteUrl());
    await add.getByRole('combobox', { name: /^Refresh/ }).selectOption('1d');
    const website = await submitAddForm(page);
    expect(website.sent).toEqual({ source: 'website', sourceUrl: siteUrl(), autoIndex: false, refreshEvery: '1d' });

    // A folder still has its branch.
    await add.getByRole('radio', { name: 'Folder on the server' }).check();
    await expect(add.getByLabel(/^Branch/).count()).resolves.toBe(1);
    expect(unexpectedErrors()).toEqual([]);
  });

  it('adds the package and the site, and shows where each comes from', async () => {
    screenshotOnFailure('sources-rows');
    const { page } = b;
    await page.goto(`${stack.url}/`);
    const row = page.locator(`[data-library-id="${NPM_LIB}"]`);
    await row.waitFor();
    await expect(row.getByTestId('source-kind').textContent()).resolves.toBe('npm package');
    await expect(row.locator('.meta').textContent()).resolves.toContain('widget-kit');
    await expect(row.getByRole('link', { name: /127\.0\.0\.1:9\/acme\/widget-kit/ }).getAttribute('href')).resolves.toBe('https://127.0.0.1:9/acme/widget-kit');
    await expect(row.getByTestId('refresh-summary').textContent()).resolves.toBe('refresh every 6h · versions minors:3');
    await expect(row.locator('.badge[data-status="on_demand"]').count()).resolves.toBe(0);

    const site = page.locator('[data-library-id^="/websites/"]');
    await expect(site.getByTestId('source-kind').textContent()).resolves.toBe('documentation site');
    await expect(site.locator('.meta .source').first().textContent()).resolves.toBe(siteUrl());
    await expect(site.getByRole('button', { name: /^Versions of/ }).count(), 'a site has no versions').resolves.toBe(0);

    // Indexed from the registry (its archive: the repository's host is closed), the row shows the version.
    await row.getByRole('button', { name: `Index ${NPM_LIB}` }).click();
    await page.locator(`[data-library-id="${NPM_LIB}"][data-state="indexed"]`).waitFor({ timeout: 45_000 });
    await expect(row.getByTestId('package-version').textContent()).resolves.toBe('1.2.0');
    await b.screenshot('sources-rows');
    await b.screenshot('sources-rows-phone', { phone: true });
    expect(unexpectedErrors()).toEqual([]);
  });

  it("shows the registry's answer for a package that does not exist", async () => {
    screenshotOnFailure('sources-unknown');
    const { page } = b;
    const add = page.getByRole('region', { name: 'Add a library' });
    await add.getByRole('radio', { name: 'Package from a registry' }).check();
    await add.getByRole('combobox', { name: 'Registry' }).selectOption('npm');
    await add.getByRole('textbox', { name: 'Package name', exact: true }).fill('no-such-package');
    const res = await submitAddForm(page);
    expect(res.sent).toMatchObject({ source: 'npm', sourceUrl: 'no-such-package' });
    expect([res.status, res.answer.code]).toEqual([400, 'PACKAGE_NOT_FOUND']);
    await add.getByRole('alert').waitFor();
    await expect(add.getByRole('textbox', { name: 'Package name', exact: true }).inputValue(), 'the name stays, to fix it').resolves.toBe('no-such-package');
  });

  it('shows the refresh schedule, pauses and resumes it, and changes its interval and policy', async () => {
    screenshotOnFailure('sources-schedule');
    const { page } = b;
    const row = page.locator(`[data-library-id="${NPM_LIB}"]`);
    await row.getByRole('button', { name: `Refresh schedule of ${NPM_LIB}` }).click();
    const panel = row.getByTestId('refresh-schedule');
    await expect(panel.getByTestId('refresh-every').textContent()).resolves.toBe('6h');
    await expect(panel.locator('.counts').textContent()).resolves.toMatch(/active every 6h · next run .+ · versions minors:3/);

    const patches: unknown[] = [];
    page.on('request', (r) => r.method() === 'PATCH' && patches.push(r.postDataJSON()));
    await panel.getByRole('button', { name: 'Pause refresh' }).click();
    await panel.locator('.badge[data-status="paused"]').waitFor();
    await panel.getByRole('button', { name: 'Resume refresh' }).click();
    await panel.locator('.badge[data-status="active"]').waitFor();

    await panel.getByRole('combobox', { name: 'Refresh' }).selectOption('1d');
    await panel.getByRole('textbox', { name: 'Version policy' }).fill('latest,match:v1.*');
    await panel.getByRole('button', { name: 'Save schedule' }).click();
    await panel.getByTestId('refresh-every').filter({ hasText: /^1d$/ }).waitFor();
    await row.getByTestId('refresh-summary').filter({ hasText: 'refresh every 1d · versions latest,match:v1.*' }).waitFor();
    await b.screenshot('sources-schedule');

    // Off: no schedule at all, and the row says so.
    await panel.getByRole('combobox', { name: 'Refresh' }).selectOption('off');
    await panel.getByRole('button', { name: 'Save schedule' }).click();
    await panel.getByText('Not refreshed on a schedule (off).').waitFor();
    await row.getByTestId('refresh-summary').filter({ hasText: /^refresh off/ }).waitFor();
    expect(patches).toEqual([
      { refreshPaused: true },
      { refreshPaused: false },
      { refreshEvery: '1d', versionPolicy: 'latest,match:v1.*' },
      { refreshEvery: 'off', versionPolicy: 'latest,match:v1.*' },
    ]);
    expect(unexpectedErrors()).toEqual([]);
  });

  it('marks a library a search registered on demand, and filters the list by it', async () => {
    screenshotOnFailure('sources-on-demand');
    const { page } = b;
    const search = await fetch(`${stack.url}/api/v2/libs/search?${new URLSearchParams({ libraryName: 'gadget-lib', query: 'mount a gadget' })}`);
    expect(search.status).toBe(200);
    await page.reload();
    const onDemand = page.locator('[data-library-id="/npm/gadget-lib"]');
    await onDemand.locator('.badge[data-status="on_demand"]').filter({ hasText: 'on demand' }).waitFor();

    const show = page.getByRole('combobox', { name: 'Show' });
    await show.selectOption('on-demand');
    const shownIds = async () => Promise.all((await page.locator('[data-library-id]').all()).map((r) => r.getAttribute('data-library-id')));
    await expect(shownIds()).resolves.toEqual(['/npm/gadget-lib']);
    await show.selectOption('by-hand');
    await page.locator(`[data-library-id="${NPM_LIB}"]`).waitFor();
    await expect(onDemand.count()).resolves.toBe(0);
    await show.selectOption('all');
    await b.screenshot('sources-on-demand');
    expect(unexpectedErrors()).toEqual([]);
  });

  it("reads a project's lockfile and shows what became of each dependency", async () => {
    screenshotOnFailure('sources-lockfile');
    const { page } = b;
    const lockfile = JSON.stringify(
      {
        name: 'my-app',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name: 'my-app', version: '1.0.0', dependencies: { sprocket: '^3.0.0', 'no-such-package': '^1.0.0' } },
          'node_modules/sprocket': { version: '3.0.0' },
          'node_modules/no-such-package': { version: '1.0.0' },
        },
      },
      null,
      2,
    );
    const panel = page.getByRole('region', { name: "Index a project's dependencies" });
    await panel.getByLabel('Lockfile or manifest').setInputFiles({ name: 'package-lock.json', mimeType: 'application/json', buffer: Buffer.from(lockfile) });
    await expect.poll(() => panel.getByRole('textbox', { name: 'Or paste it' }).inputValue()).toBe(lockfile);
    await expect(panel.getByRole('combobox', { name: /^File name/ }).inputValue()).resolves.toBe('package-lock.json');

    const isLockfile = (r: { url(): string }) => new URL(r.url()).pathname === '/api/v1/libs/from-lockfile';
    const [request] = await Promise.all([page.waitForRequest(isLockfile), panel.getByRole('button', { name: 'Index dependencies' }).click()]);
    expect(request.postDataJSON()).toEqual({ content: lockfile, includeDev: false, fileName: 'package-lock.json' });

    const table = panel.getByRole('table', { name: 'Direct dependencies' });
    await table.waitFor();
    const sprocket = table.locator('[data-dependency="sprocket"]');
    await expect(sprocket.getAttribute('data-status')).resolves.toMatch(/^(queued|ready)$/);
    await expect(sprocket.getByRole('cell').first().textContent()).resolves.toBe('3.0.0');
    await expect(sprocket.getByRole('link').textContent()).resolves.toMatch(/^\/npm\/sprocket/);
    await expect(table.locator('[data-dependency="no-such-package"]').getAttribute('data-status')).resolves.toBe('unknown');
    await expect(panel.getByTestId('lockfile-summary').textContent()).resolves.toMatch(/^\d ready · \d queued · 1 unknown$/);
    // The dependency is registered: the list shows it.
    await page.locator('[data-library-id="/npm/sprocket"]').waitFor();
    await b.screenshot('sources-lockfile');
    await b.screenshot('sources-lockfile-phone', { phone: true });
    expect(unexpectedErrors()).toEqual([]);
  });

  it('finds a library by name on the search page, registering a package nobody registered', async () => {
    screenshotOnFailure('sources-find');
    const { page } = b;
    await page.goto(`${stack.url}/search`);
    const find = page.getByRole('form', { name: 'Find a library' });
    await find.getByRole('searchbox', { name: 'Find a library by name' }).fill('cog-kit');
    await find.getByRole('button', { name: 'Find' }).click();
    await find.getByTestId('found-libraries').filter({ hasText: '/npm/cog-kit' }).waitFor();
    // The library list is read again once the match is found, and the match chosen then: a moment after the hint.
    await expect.poll(() => page.getByRole('combobox', { name: 'Library' }).inputValue()).toBe('/npm/cog-kit');
    await find.getByRole('searchbox', { name: 'Find a library by name' }).fill('nothing-anywhere');
    await find.getByRole('button', { name: 'Find' }).click();
    await find.getByTestId('found-libraries').filter({ hasText: 'no registry has a package of that name' }).waitFor();
    expect(unexpectedErrors()).toEqual([]);
  });
});
