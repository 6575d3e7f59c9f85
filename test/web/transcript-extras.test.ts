import fs from 'node:fs';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { type TestBrowser, launchBrowser } from '../support/browser.js';
import { FakeLlm } from '../../fakes/recipe-fakes.js';
import { smallWav, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';

/**
 * The transcript view's translations and summary, in headless Chromium: a done job is translated into German from
 * the page (its progress followed live, its files offered) and summarised, its chapters shown.
 */
let h: TranscriptionHarness;
let llm: FakeLlm;
let b: TestBrowser;
beforeAll(async () => {
  llm = await FakeLlm.start();
  [h, b] = await Promise.all([
    startTranscriptionHarness({ env: { LLM_API_BASE_URL: llm.baseUrl, LLM_MODEL: 'fake-model', TRANSLATION_CHUNK_LINES: '1' } }),
    launchBrowser(),
  ]);
});
afterAll(async () => {
  await b?.close();
  await h?.stop();
  await llm?.close();
});

it('translates a done transcript from the page, offers its files, and shows the summary\'s chapters', async () => {
  onTestFailed(async () => {
    await b.screenshot('transcript-extras-failed').catch(() => undefined);
  });
  const created = await uploadJob(h.url, { bytes: smallWav(1), name: 'talk.wav' }, { mode: 'none', title: 'Team talk' });
  const id = created.body.id as string;
  await h.asr.complete(await h.asr.waitForJob(id), [
    { start: 0, end: 2, text: 'Welcome to the weekly team talk.' },
    { start: 3, end: 5, text: 'Today we plan the next release.' },
  ]);
  await waitForJob(h.url, id, (j) => j.status === 'done');

  const { page } = b;
  await page.goto(`${h.url}/transcripts`);
  const job = page.locator(`[data-job-id="${id}"]`);
  await job.getByLabel(/^Translate into/).fill('de');
  await job.getByRole('button', { name: 'Translate', exact: true }).click();
  const de = job.locator('li[data-language="de"][data-status="done"]');
  await de.waitFor({ timeout: 30_000 });
  const vtt = de.getByRole('link', { name: 'VTT' });
  await expect(vtt.getAttribute('href')).resolves.toBe(`/api/jobs/${id}/files/vtt?language=de`);
  const [download] = await Promise.all([page.waitForEvent('download'), vtt.click()]);
  expect(download.suggestedFilename()).toBe('Team-talk.de.vtt');
  expect(fs.readFileSync((await download.path())!, 'utf8')).toContain('[de] Welcome to the weekly team talk.');

  await job.getByRole('button', { name: 'Summarise with chapters' }).click();
  const summary = job.locator('[data-testid="summary"][data-status="done"]');
  await summary.waitFor({ timeout: 30_000 });
  await expect(summary.locator('.chapters li').first().textContent()).resolves.toMatch(/^00:00 Welcome to the weekly/);
  await expect(summary.getByRole('link', { name: 'Summary MD' }).getAttribute('href')).resolves.toBe(`/api/jobs/${id}/summary/md`);
  await b.screenshot('transcript-extras');
});
