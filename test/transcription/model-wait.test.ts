import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getJob, smallWav, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';

/** The backend answers 503 + Retry-After while its model loads: the job waits for it, then submits again. */
let h: TranscriptionHarness;
beforeAll(async () => {
  h = await startTranscriptionHarness({
    env: { TRANSCRIPTION_MAX_RESUBMITS: '2', TRANSCRIPTION_MODEL_WAIT_MAX_MS: '60000' },
  });
});
afterAll(() => h?.stop());
beforeEach(() => {
  h.asr.modelEvents = 'live';
  h.asr.setModel('ready');
  h.asr.retryAfterSeconds = 1;
});

async function start(): Promise<string> {
  const created = await uploadJob(h.url, { bytes: smallWav(1), name: 'wait.wav' }, { mode: 'none' });
  expect(created.status).toBe(201);
  return created.body.id;
}

const attemptsOf = (since: number) => h.asr.attempts.slice(since);

describe('submission while the model loads', () => {
  it('follows /model/events and resubmits on `ready`, long before Retry-After, with a fresh body each time', async () => {
    h.asr.setModel('loading');
    h.asr.retryAfterSeconds = 120;
    const since = h.asr.attempts.length;
    const connections = h.asr.modelEventConnections;
    const id = await start();
    await h.asr.waitFor(() => h.asr.modelEventConnections > connections, 20_000, 'the model-events subscription');
    const waiting = await waitForJob(h.url, id, (j) => j.stage === 'waiting-for-model');
    expect(waiting).toMatchObject({ status: 'processing', progress: 40, asrJobId: null });
    expect(waiting.stageDetail).toContain('retry after 60 s'); // Retry-After capped by TRANSCRIPTION_MODEL_WAIT_MAX_MS

    const t0 = Date.now();
    h.asr.setModel('ready');
    const submission = await h.asr.waitForJob(id);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const attempts = attemptsOf(since);
    expect(attempts.map((a) => a.status)).toEqual([503, 202]);
    // Both attempts carried the whole file: a consumed stream is never sent again.
    expect(attempts[1]!.bytes).toBe(attempts[0]!.bytes);
    expect(attempts[1]!.sha256).toBe(attempts[0]!.sha256);
    expect(attempts[0]!.bytes).toBe(44 + 32_000);

    await waitForJob(h.url, id, (j) => j.stage === 'transcribing');
    await h.asr.complete(submission);
    expect(await getJob(h.url, id)).toMatchObject({ status: 'done', asrJobId: submission.id });
  });

  it.each(['unreachable', 'close-without-ready'] as const)('resubmits after Retry-After when the event stream is %s', async (mode) => {
    h.asr.setModel('loading');
    h.asr.modelEvents = mode;
    h.asr.retryAfterSeconds = 2;
    const since = h.asr.attempts.length;
    const connections = h.asr.modelEventConnections;
    const id = await start();
    // The stream was tried (and failed or closed) before the model becomes ready.
    await h.asr.waitFor(() => h.asr.modelEventConnections > connections, 20_000, 'the model-events attempt');
    h.asr.setModel('ready');
    const submission = await h.asr.waitForJob(id);
    const [first, second] = attemptsOf(since);
    expect([first!.status, second!.status]).toEqual([503, 202]);
    // Not before Retry-After: there was no ready message to go by.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1900);
    expect(second!.sha256).toBe(first!.sha256);
    await waitForJob(h.url, id, (j) => j.stage === 'transcribing');
    await h.asr.complete(submission);
    expect((await getJob(h.url, id)).status).toBe('done');
  });

  it('gives up after TRANSCRIPTION_MAX_RESUBMITS resubmissions, and the job fails saying why', async () => {
    h.asr.setModel('loading');
    h.asr.modelEvents = 'unreachable';
    h.asr.retryAfterSeconds = 0;
    const since = h.asr.attempts.length;
    const id = await start();
    const job = await waitForJob(h.url, id, (j) => j.status === 'failed');
    expect(job.error).toBe('The transcription backend was still loading its model after 3 submissions');
    expect(attemptsOf(since).map((a) => a.status)).toEqual([503, 503, 503]);
  });
});
