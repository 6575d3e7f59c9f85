import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeLlm } from '../../fakes/recipe-fakes.js';
import { isFinished, smallWav, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';

/** TRANSCRIPTION_SUMMARY=true: every job that finishes gets a summary with chapters, without being asked. */
let h: TranscriptionHarness;
let llm: FakeLlm;
beforeAll(async () => {
  llm = await FakeLlm.start();
  h = await startTranscriptionHarness({ env: { LLM_API_BASE_URL: llm.baseUrl, LLM_MODEL: 'fake-model', TRANSCRIPTION_SUMMARY: 'true' } });
});
afterAll(async () => {
  await h?.stop();
  await llm?.close();
});

it('summarises every finished job', async () => {
  const created = await uploadJob(h.url, { bytes: smallWav(1), name: 'talk.wav' }, { mode: 'none', title: 'Auto' });
  const id = created.body.id as string;
  const submission = await h.asr.waitForJob(id);
  await h.asr.complete(submission, [
    { start: 0, end: 2, text: 'First we talk about workflows.' },
    { start: 3, end: 5, text: 'Then about activities and retries.' },
  ]);
  const job = await waitForJob(h.url, id, (j) => j.status === 'done' && isFinished(j.summary ?? { status: 'pending' }), 30_000);
  expect(job.summary).toMatchObject({ task: 'summary', status: 'done', summary: { summary: 'A part of 2 lines, from 00:00 on.' } });
  expect(job.summary.summary.chapters[0]).toMatchObject({ start: 0, title: 'First we talk about' });
  expect(llm.requests).toHaveLength(1);
});
