import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { type TestBrowser, launchBrowser } from '../support/browser.js';
import { FakeAsr } from '../../fakes/fake-asr.js';
import { TestRepo, WIDGET_GUIDE } from '../support/git.js';
import { json } from '../support/http.js';
import { wav } from '../../fakes/media.js';
import { freePort } from '../../fakes/ports.js';
import { FakeLlm, FakeRecipeManager, FakeSocialSite, FakeYtDlp } from '../../fakes/recipe-fakes.js';
import { recipeCaption, recipeEnv } from '../support/recipes.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * The web interface end to end, in headless Chromium against one stack (API and every worker) with the fake
 * transcription backend, recipe model, recipe manager and social site: each flow as a user goes through it.
 */
let stack: TestStack;
let asr: FakeAsr;
let site: FakeSocialSite;
let llm: FakeLlm;
let manager: FakeRecipeManager;
let ytdlp: FakeYtDlp;
let b: TestBrowser;
let sources: string;

const LIBRARY = '/local/widget-kit';
beforeAll(async () => {
  let port: number;
  [asr, site, llm, manager, ytdlp, port] = await Promise.all([FakeAsr.start(), FakeSocialSite.start(), FakeLlm.start(), FakeRecipeManager.start('mealie'), FakeYtDlp.create(), freePort()]);
  asr.autoCompleteMs = 200;
  sources = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-web-sources-'));
  const repo = new TestRepo(path.join(sources, 'widget-kit'));
  repo.write({ 'README.md': '# Widget Kit\n\nWidget Kit renders widgets in the browser and on the server.\n', 'docs/guide.md': WIDGET_GUIDE });
  repo.commit('first');
  repo.tag('v1.0.0');
  fs.mkdirSync(path.join(sources, 'not-a-repo'));

  [stack, b] = await Promise.all([
    startTestStack({
      env: {
        PORT: String(port),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        LOCAL_SOURCE_ROOTS: sources,
        ASR_BASE_URL: asr.url,
        ...recipeEnv({ llm, manager, ytdlp }),
      },
    }),
    // Two seconds of a tone with pauses, at the rate Chromium's fake microphone plays.
    launchBrowser({ microphone: wav({ seconds: 3, sampleRate: 48_000, pauses: true }) }),
  ]);
});
afterAll(async () => {
  await b?.close();
  await stack?.stop();
  await Promise.allSettled([asr?.close(), site?.close(), llm?.close(), manager?.close(), ytdlp?.remove()]);
  if (sources) fs.rmSync(sources, { recursive: true, force: true });
});

/** A screenshot of the state a failing test left, next to the others. */
function screenshotOnFailure(name: string): void {
  onTestFailed(async () => {
    await b.screenshot(`${name}-failed`).catch(() => undefined);
  });
}

/** Console errors other than the browser's own line for a 4xx/5xx answer (the UI shows those itself). */
const unexpectedErrors = () => b.pageErrors.filter((e) => !e.startsWith('Failed to load resource'));

describe('the web interface, in a browser', () => {
  it('adds a local library through the folder picker and shows it indexing live until it is indexed', async () => {
    screenshotOnFailure('libraries');
    const { page } = b;
    await page.goto(`${stack.url}/`);
    await expect(page.title()).resolves.toBe('Libraries · Gristmill');

    // A folder that is not a repository: the API's message is shown as it is.
    await page.getByRole('radio', { name: 'Folder on the server' }).check();
    await page.getByLabel('Folder', { exact: true }).fill(path.join(sources, 'missing'));
    await page.getByRole('button', { name: 'Add library' }).click();
    await expect(page.getByRole('alert').first().textContent()).resolves.toContain(path.join(sources, 'missing'));

    // The folder picker starts in LOCAL_SOURCE_ROOTS and marks repositories.
    await page.getByRole('button', { name: 'Browse…' }).click();
    const picker = page.getByRole('dialog', { name: 'Choose a folder on the server' });
    await picker.getByTestId('picker-path').filter({ hasText: sources }).waitFor();
    await picker.getByRole('listitem').filter({ hasText: 'widget-kit' }).getByText('git').waitFor();
    await picker.getByRole('button', { name: 'widget-kit' }).click();
    await picker.getByTestId('picker-path').filter({ hasText: path.join(sources, 'widget-kit') }).waitFor();
    await picker.getByRole('button', { name: 'Choose this folder' }).click();
    await expect(page.getByLabel('Folder', { exact: true }).inputValue()).resolves.toBe(path.join(sources, 'widget-kit'));

    // Record what the live progress line shows while the job runs (page code as a string: the tests compile
    // without the DOM library).
    await page.evaluate(`(() => {
      const seen = (window.progressSeen = []);
      new MutationObserver(() => {
        for (const el of document.querySelectorAll('[data-testid="job-progress"]')) seen.push(el.textContent || '');
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
    await page.getByRole('button', { name: 'Add library' }).click();
    await page.getByRole('status').filter({ hasText: `Added ${LIBRARY}; indexing has started.` }).waitFor();

    const row = page.locator(`[data-library-id="${LIBRARY}"]`);
    await page.locator(`[data-library-id="${LIBRARY}"][data-state="indexed"]`).waitFor({ timeout: 30_000 });
    const progressSeen = await page.evaluate<string[]>('window.progressSeen');
    expect(progressSeen.length, 'the progress line was shown').toBeGreaterThan(0);
    expect(progressSeen.join(' ')).toMatch(/queued|crawling|parsing|writing|embedding|statistics/);
    const count = await row.getByTestId('snippet-count').textContent();
    expect(Number(/^(\d+) snippets$/.exec(count ?? '')?.[1])).toBeGreaterThan(0);
    await expect(row.getByTestId('job-progress').count()).resolves.toBe(0);

    // Versions: the tag is discovered and indexed from the row.
    await row.getByRole('button', { name: 'Versions' }).click();
    await row.getByRole('button', { name: 'Discover tags' }).click();
    await row.getByRole('button', { name: 'Add version v1.0.0' }).click();
    await row.locator(`[data-version-id="${LIBRARY}/v1.0.0"]`).getByText('indexed', { exact: true }).waitFor({ timeout: 30_000 });

    await b.screenshot('libraries-indexed');
    await b.screenshot('libraries-indexed-phone', { phone: true });
    expect(unexpectedErrors()).toEqual([]);
  });

  it('searches the library and shows each result with its type, breadcrumb, language and tokens; and the text view', async () => {
    screenshotOnFailure('search');
    const { page } = b;
    await page.locator(`[data-library-id="${LIBRARY}"]`).getByRole('link', { name: 'Search' }).click();
    await page.waitForURL(/\/search\?library=%2Flocal%2Fwidget-kit$/);
    await expect.poll(() => page.getByRole('combobox', { name: /^Library/ }).inputValue()).toBe(LIBRARY); // once the list is read
    await page.getByRole('searchbox', { name: 'Query' }).fill('mount a widget tree');
    await page.getByRole('combobox', { name: /^Mode/ }).selectOption('keyword');
    await page.getByLabel('Token budget').fill('5000');
    await page.getByRole('button', { name: 'Search', exact: true }).click();

    const results = page.locator('.results > li');
    await results.first().waitFor();
    expect(Number(await page.getByTestId('result-count').textContent())).toBeGreaterThan(0);
    const first = results.first();
    await expect(first.locator('.breadcrumb').textContent()).resolves.toContain('Rendering');
    await expect(first.locator('.badge').textContent()).resolves.toMatch(/^(code|info)$/);
    await expect(first.locator('.meta').textContent()).resolves.toMatch(/docs\/guide\.md.* · \d+ tokens/);
    await expect(page.locator('.results .lang').first().textContent()).resolves.toContain('ts');
    // The query is in the address, so the page can be shared.
    expect(new URL(page.url()).searchParams.get('q')).toBe('mount a widget tree');

    await b.context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('button', { name: `Copy library id: ${LIBRARY}` }).click();
    await expect(page.evaluate<string>('navigator.clipboard.readText()')).resolves.toBe(LIBRARY);

    await b.screenshot('search-results');
    await b.screenshot('search-results-phone', { phone: true });

    await page.getByRole('button', { name: 'Show as text' }).click();
    const text = await page.getByTestId('text-view').textContent();
    expect(text).toContain('## Context Results');
    expect(text).toContain(`Repository: widget-kit (${LIBRARY})`);

    // A version of the library is searched as /owner/repo/<tag>.
    await page.getByRole('combobox', { name: /^Version/ }).selectOption('v1.0.0');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'results from widget-kit v1.0.0' }).waitFor();
    expect(unexpectedErrors()).toEqual([]);
  });

  it('records two seconds from the microphone and shows the transcript from the backend, with downloads', async () => {
    screenshotOnFailure('transcripts');
    const { page } = b;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Transcripts' }).click();
    await page.getByRole('button', { name: 'Start recording' }).click();
    await page.getByTestId('record-time').filter({ hasText: '00:02' }).waitFor();
    await page.getByRole('button', { name: 'Stop recording' }).click();
    await page.getByLabel('The recording').waitFor();
    await page.getByLabel('Title (default: Recording and the date)').fill('Kitchen memo');
    await page.getByRole('button', { name: 'Transcribe recording' }).click();

    const job = page.locator('[data-job-id]').filter({ hasText: 'Kitchen memo' });
    await job.first().waitFor();
    await page.locator('[data-job-id][data-status="done"]').filter({ hasText: 'Kitchen memo' }).waitFor({ timeout: 45_000 });
    const transcript = job.getByTestId('transcript');
    await transcript.waitFor();
    await expect(transcript.textContent()).resolves.toContain('sentence number 1 of the demo');

    // What reached the backend: the recording, as 16 kHz mono WAV, about two seconds of it.
    const submission = asr.jobs.at(-1)!;
    expect(submission.isWav).toBe(true);
    const seconds = (submission.bytes - 44) / 32_000;
    expect(seconds).toBeGreaterThan(1.5);
    expect(seconds).toBeLessThan(4);

    // The SRT link downloads the file.
    const srtLink = job.getByRole('link', { name: 'SRT' });
    const [download] = await Promise.all([page.waitForEvent('download'), srtLink.click()]);
    expect(download.suggestedFilename()).toBe('Kitchen-memo.srt');
    const srt = fs.readFileSync((await download.path())!, 'utf8');
    expect(srt).toMatch(/^1\r?\n00:00:00,000 --> 00:00:0\d,\d{3}\r?\nsentence number 1 of the demo\r?\n/);

    // Push cannot work in this headless browser, and the page says why instead of offering a button that fails.
    await expect(page.getByTestId('push-unavailable').textContent()).resolves.toMatch(/blocked|HTTPS|cannot receive/);

    await b.screenshot('transcript-done');
    await b.screenshot('transcript-done-phone', { phone: true });
    expect(unexpectedErrors()).toEqual([]);
  });

  it('uploads a file, cancels the job while the backend has it, and retries it to the end', async () => {
    screenshotOnFailure('transcripts-cancel');
    const { page } = b;
    asr.autoCompleteMs = undefined; // the backend keeps the job until told
    await page.getByLabel('Audio or video file').setInputFiles({ name: 'Standup.wav', mimeType: 'audio/wav', buffer: wav({ seconds: 2, pauses: true }) });
    await page.getByRole('button', { name: 'Upload and transcribe' }).click();
    const job = page.locator('[data-job-id]').filter({ hasText: 'Standup' });
    await job.getByText(/^transcribing · \d+%$/).waitFor({ timeout: 30_000 });
    const jobId = await job.getAttribute('data-job-id');
    await job.getByRole('button', { name: 'Cancel' }).click();
    await page.locator(`[data-job-id="${jobId}"][data-status="cancelled"]`).waitFor();
    await expect.poll(() => asr.cancels.length).toBeGreaterThan(0); // the backend was asked to cancel its job

    asr.autoCompleteMs = 200;
    // The status comes by the job's event; its segments by the read that follows the `done` event, a moment later.
    // That read is held here until the row says done: meanwhile it shows the transcript loading, not the cancelled
    // run's (empty) one.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(`**/api/jobs/${jobId}`, async (route) => {
      await held;
      await route.continue();
    });
    try {
      await job.getByRole('button', { name: 'Retry' }).click();
      await page.locator(`[data-job-id="${jobId}"][data-status="done"]`).waitFor({ timeout: 30_000 });
      await expect(job.getByTestId('transcript').count()).resolves.toBe(0);
      await job.getByText('Loading…').waitFor({ state: 'attached', timeout: 1000 });
    } finally {
      release();
    }
    await job.getByTestId('transcript').getByText('sentence number 1 of the demo').waitFor();
    await page.unroute(`**/api/jobs/${jobId}`);
    expect(unexpectedErrors()).toEqual([]);
  });

  /** What the test reads of an audio element (this file is typed without the DOM's types). */
  type Media = { currentTime: number; error: unknown; pause(): void };

  it('corrects a segment in place, names the speakers and plays the audio from a segment', async () => {
    screenshotOnFailure('transcripts-corrections');
    const { page } = b;
    const demo = asr.result;
    asr.result = (job) => ({
      id: job.id,
      status: 'completed',
      segments: [
        { start: 0, end: 1.5, text: 'welcome to gristmil', speaker: 'SPEAKER_00' },
        { start: 1.5, end: 3, text: 'thanks for having me', speaker: 'SPEAKER_01' },
      ],
    });
    try {
      await page.getByLabel('Audio or video file').setInputFiles({ name: 'Interview.wav', mimeType: 'audio/wav', buffer: wav({ seconds: 3, pauses: true }) });
      await page.getByRole('button', { name: 'Upload and transcribe' }).click();
      const job = page.locator('[data-job-id][data-status="done"]').filter({ hasText: 'Interview' });
      await job.waitFor({ timeout: 30_000 });
      const jobId = (await job.getAttribute('data-job-id'))!;
      const transcript = job.getByTestId('transcript');
      await transcript.getByText('welcome to gristmil').waitFor();

      // Inline correction: the segment's text changes, the server keeps what the backend said.
      await job.getByRole('button', { name: 'Edit segment at 00:00' }).click();
      await job.getByLabel('Text of the segment at 00:00').fill('Welcome to Gristmill.');
      await job.getByRole('button', { name: 'Save' }).click();
      await transcript.getByText('Welcome to Gristmill.').waitFor();
      const stored = await json(await fetch(`${stack.url}/api/jobs/${jobId}`));
      expect(stored.segments[0]).toMatchObject({ text: 'Welcome to Gristmill.', edit: { originalText: 'welcome to gristmil' } });

      // Speaker names.
      await job.getByLabel('Name of SPEAKER_00').fill('Ana');
      await job.getByLabel('Name of SPEAKER_01').fill('Ben');
      await job.getByRole('button', { name: 'Rename speakers' }).click();
      await transcript.getByText('Ben:').waitFor();
      await expect(transcript.textContent()).resolves.toMatch(/Ana:.*Welcome to Gristmill\..*Ben:.*thanks for having me/);
      expect((await json(await fetch(`${stack.url}/api/jobs/${jobId}`))).segments.map((s: { speaker: string }) => s.speaker)).toEqual(['Ana', 'Ben']);

      // Playing from the second segment: the job's audio, from 1.5 s on.
      await job.getByRole('button', { name: 'Play from 00:01' }).click();
      const audio = job.getByLabel('Audio of Interview');
      await expect.poll(() => audio.evaluate((el) => (el as unknown as Media).currentTime), { timeout: 10_000 }).toBeGreaterThanOrEqual(1.5);
      expect(await audio.evaluate((el) => (el as unknown as Media).error)).toBeNull();
      await audio.evaluate((el) => (el as unknown as Media).pause());
      await b.screenshot('transcript-corrections');
      expect(unexpectedErrors()).toEqual([]);
    } finally {
      asr.result = demo;
    }
  });

  it('queues a recipe post and shows it succeed, with a link to the recipe in the recipe manager', async () => {
    screenshotOnFailure('recipes');
    const { page } = b;
    const post = site.add('lemon-pasta', { title: 'Lemon pasta', caption: recipeCaption('Lemon pasta'), picture: true });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Recipes' }).click();
    await page.getByLabel('Post URL').fill(post);
    await page.getByRole('button', { name: 'Queue' }).click();
    await page.getByRole('status').filter({ hasText: `Queued ${post}` }).waitFor();

    const item = page.locator('[data-item-id][data-status="success"]').filter({ hasText: post });
    await item.waitFor({ timeout: 30_000 });
    await expect(item.locator('h3').textContent()).resolves.toBe('Lemon pasta');
    await expect(item.locator('.phases > li[data-status="completed"]').count()).resolves.toBe(3);
    // Parsing's pictures step, skipped (the model is not set to take images), with why.
    const pictures = item.locator('.phases .steps li[data-step="pictures"]');
    await expect(pictures.getAttribute('data-status')).resolves.toBe('skipped');
    await expect(pictures.locator('.step-detail').textContent()).resolves.toContain('LLM_VISION=false');
    await expect(item.locator('.phases > li', { hasText: 'Understand the recipe' }).locator('.steps li').count()).resolves.toBe(1);
    await expect(item.getByRole('link', { name: 'Transcript of the video' }).count()).resolves.toBe(0);
    await expect(item.getByTestId('recipe-link').getAttribute('href')).resolves.toBe(`${manager.url}/g/home/r/lemon-pasta`);

    await b.screenshot('recipe-success');
    await b.screenshot('recipe-success-phone', { phone: true });
    expect(unexpectedErrors()).toEqual([]);
  });

  it('lists each recipe of a post with several, each linked to its page in the recipe manager', async () => {
    screenshotOnFailure('recipes-several');
    const { page } = b;
    const recipe = (name: string, ingredient: string) => ({
      name, description: null, recipeYield: null, prepTime: null, cookTime: null, totalTime: null,
      recipeIngredient: [ingredient], recipeInstructions: ['Cook.'], recipeCategory: [], recipeCuisine: null, keywords: [],
    });
    llm.script.push({ kind: 'recipes', recipes: [recipe('Pancakes', '200 g flour'), recipe('Blueberry syrup', '150 g blueberries')] });
    const post = site.add('brunch', { title: 'Brunch', caption: 'Pancakes and a blueberry syrup.' });
    await page.getByLabel('Post URL').fill(post);
    await page.getByRole('button', { name: 'Queue' }).click();

    const item = page.locator('[data-item-id][data-status="success"]').filter({ hasText: post });
    await item.waitFor({ timeout: 30_000 });
    await expect(item.locator('h3').textContent()).resolves.toBe('2 recipes');
    const links = item.getByTestId('recipe-list').getByRole('link');
    await expect(links.allTextContents()).resolves.toEqual(['Pancakes', 'Blueberry syrup']);
    await expect(links.nth(1).getAttribute('href')).resolves.toBe(`${manager.url}/g/home/r/blueberry-syrup`);
    await expect(item.getByTestId('recipe-link').getAttribute('href')).resolves.toBe(`${manager.url}/g/home/r/pancakes`);
    expect(unexpectedErrors()).toEqual([]);
  });

  it("shows the video's speech step of a post whose recipe is in the video, and links its transcript", async () => {
    screenshotOnFailure('recipes-speech');
    const { page } = b;
    const spoken = ['- 200 g spaghetti', '- 1 lemon', '1. Boil the pasta.', '2. Toss it with the lemon.'];
    const demo = asr.result;
    asr.result = (job) => ({ id: job.id, status: 'completed', segments: spoken.map((text, i) => ({ start: i * 2, end: i * 2 + 1.8, text })) });
    const audio = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-web-speech-')), 'speech.wav');
    fs.writeFileSync(audio, wav({ seconds: 3, pauses: true }));
    try {
      const post = site.add('reel', { title: 'Lemon spaghetti', caption: 'Recipe in the video', picture: true });
      await ytdlp.set({ [post]: { info: { title: 'Lemon spaghetti', description: 'Recipe in the video', extractor_key: 'Instagram', duration: 6, ext: 'mp4' }, media: audio } });
      await page.getByLabel('Post URL').fill(post);
      await page.getByRole('button', { name: 'Queue' }).click();

      const item = page.locator('[data-item-id][data-status="success"]').filter({ hasText: post });
      await item.waitFor({ timeout: 60_000 });
      const speech = item.locator('.phases .steps li[data-step="speech"]');
      await expect(speech.getAttribute('data-status')).resolves.toBe('completed');
      await expect(speech.locator('.step-name').textContent()).resolves.toBe("The video's speech");
      const detail = await speech.locator('.step-detail').textContent();
      const jobId = /transcription job ([\w-]+)\)/.exec(detail ?? '')?.[1];
      expect(detail, 'the step names its transcription job').toMatch(/^Transcribed the video's speech/);
      await expect(item.getByRole('link', { name: 'Transcript of the video' }).getAttribute('href')).resolves.toBe(`/api/jobs/${jobId}/files/txt`);
      const transcript = await page.evaluate(async (href) => (await fetch(href)).text(), `/api/jobs/${jobId}/files/txt`);
      expect(transcript).toContain('200 g spaghetti');
      await b.screenshot('recipe-speech');
      expect(unexpectedErrors()).toEqual([]);
    } finally {
      asr.result = demo;
      await ytdlp.set({});
      fs.rmSync(path.dirname(audio), { recursive: true, force: true });
    }
  });

  it('shows why a post failed, and retries it once the problem is fixed', async () => {
    screenshotOnFailure('recipes-retry');
    const { page } = b;
    const post = site.add('gone-post', { title: 'Gone', caption: recipeCaption('Risotto'), status: 404 });
    await page.getByLabel('Post URL').fill(post);
    await page.getByRole('button', { name: 'Queue' }).click();
    const item = page.locator('[data-item-id]').filter({ hasText: post });
    await page.locator('[data-item-id][data-status="error"]').filter({ hasText: post }).waitFor({ timeout: 30_000 });
    await expect(item.getByRole('alert').textContent()).resolves.toContain('404');
    await expect(item.locator('.phases > li[data-status="error"] .phase-name').textContent()).resolves.toBe('Read the post');

    site.pages.get('gone-post')!.status = 200;
    await item.getByRole('button', { name: 'Retry' }).click();
    await page.locator('[data-item-id][data-status="success"]').filter({ hasText: post }).waitFor({ timeout: 30_000 });
    await expect(item.getByRole('alert').count()).resolves.toBe(0);
    await expect(item.locator('.meta').textContent()).resolves.toContain('run 2');
    expect(unexpectedErrors()).toEqual([]);
  });

  it('takes a post shared from a phone (the share target) straight into the queue', async () => {
    screenshotOnFailure('share');
    const { page } = b;
    const post = site.add('tomato-soup', { title: 'Tomato soup', caption: recipeCaption('Tomato soup') });
    const shared = new URLSearchParams({ title: 'Tomato soup', text: `So good!! ${post}?igsh=abc123 #soup` });
    await page.goto(`${stack.url}/recipes/share?${shared}`);
    await page.waitForURL(`${stack.url}/recipes`);
    await page.locator('[data-item-id][data-status="success"]').filter({ hasText: post }).waitFor({ timeout: 30_000 });

    // Nothing to take: the user is told, and the text is there to fix.
    await page.goto(`${stack.url}/recipes/share?${new URLSearchParams({ text: 'no link here' })}`);
    await expect(page.getByRole('alert').first().textContent()).resolves.toContain('has no link in it');
    await expect(page.getByLabel('Post URL').inputValue()).resolves.toBe('no link here');
    expect(unexpectedErrors()).toEqual([]);
  });

  it('changes settings and tells why an embedding profile cannot connect', async () => {
    screenshotOnFailure('settings');
    const { page } = b;
    await page.goto(`${stack.url}/settings`);
    const jobs = page.getByLabel('Jobs at once');
    await expect.poll(() => jobs.inputValue()).toMatch(/^\d+$/);
    await jobs.fill('1');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved: up to 1 indexing job at once.' }).waitFor();

    await page.getByLabel('New profile from').selectOption({ label: 'Local server (Ollama, LM Studio)' });
    // A server with no embeddings endpoint (the fake model's): the provider's own explanation is shown.
    await page.getByLabel('Base URL').fill(llm.baseUrl);
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect(page.getByRole('alert').first().textContent()).resolves.toContain('The embedding endpoint or model was not found (404)');
    await b.screenshot('settings');
    await b.screenshot('settings-phone', { phone: true });
  });

  it('deletes the library after a confirmation', async () => {
    screenshotOnFailure('delete');
    const { page } = b;
    await page.goto(`${stack.url}/`);
    const row = page.locator(`[data-library-id="${LIBRARY}"]`);
    await row.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: `Delete ${LIBRARY}?` });
    // Escape cancels: nothing is deleted.
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await expect(row.count()).resolves.toBe(1);

    await row.getByRole('button', { name: 'Delete' }).click();
    await dialog.getByRole('button', { name: 'Delete library' }).click();
    await page.getByText('No libraries yet: add one above.').waitFor();
    expect((await json(await fetch(`${stack.url}/api/v1/libs`))).total).toBe(0);
    expect(unexpectedErrors()).toEqual([]);
  });
});
