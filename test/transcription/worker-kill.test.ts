import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TranscriptionWebhook } from '../../transcription/entities.js';
import { json } from '../support/http.js';
import { getJob, smallWav, startTranscriptionHarness, type TranscriptionHarness, uploadJob, waitForJob } from '../support/transcription.js';
import { killWorker, startWorkerProcess } from '../support/worker-process.js';

/**
 * Durability: the API runs here without workers; transcription workers are separate `npm run worker` processes
 * that the test kills with SIGKILL mid-job. A new worker picks the job up where it was.
 */
let h: TranscriptionHarness;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  h = await startTranscriptionHarness({
    queues: [],
    env: { TRANSCRIPTION_HEARTBEAT_TIMEOUT_MS: '2000', TRANSCRIPTION_WEBHOOK_RESPONSE_MS: '1500', TRANSCRIPTION_MODEL_WAIT_MAX_MS: '120000' },
  });
});
afterAll(async () => {
  await Promise.all(workers.map(killWorker));
  await h?.stop();
});

const startWorker = async () => {
  const worker = await startWorkerProcess(h.stack, ['transcription'], { ASR_BASE_URL: h.asr.url, PUSH_CA_FILE: h.push.caFile });
  workers.push(worker);
  return worker;
};
const kill = killWorker;

describe('a transcription worker killed mid-job', () => {
  let jobId = '';

  it('leaves a job pending while no worker runs (and a pending job cannot be retried)', async () => {
    const created = await uploadJob(h.url, { bytes: smallWav(1), name: 'durable.wav' }, { mode: 'none' });
    expect(created.status).toBe(201);
    await new Promise((r) => setTimeout(r, 500));
    expect((await getJob(h.url, created.body.id)).status).toBe('pending');
    const retry = await fetch(`${h.url}/api/jobs/${created.body.id}/retry`, { method: 'POST' });
    expect(retry.status).toBe(409);
    expect(await json(retry)).toMatchObject({ code: 'JOB_NOT_RETRYABLE' });
    jobId = created.body.id;
  });

  // Three worker processes start one after another (each bundles the workflows): generous under load.
  it('resumes a model wait on another worker when the first dies, and a webhook sent while no worker runs is kept', { timeout: 240_000 }, async () => {
    h.asr.setModel('loading');
    h.asr.retryAfterSeconds = 120;
    const a = await startWorker();
    await h.asr.waitFor(() => h.asr.modelEventConnections >= 1, 30_000, 'worker A following the model events');
    expect(await getJob(h.url, jobId)).toMatchObject({ status: 'processing', stage: 'waiting-for-model' });
    await kill(a);

    // Worker B takes over the heartbeating wait once A's heartbeats stop, and follows the events again.
    const b = await startWorker();
    await h.asr.waitFor(() => h.asr.modelEventConnections >= 2, 30_000, 'worker B following the model events');
    h.asr.setModel('ready');
    const submission = await h.asr.waitForJob(jobId, 30_000);
    await waitForJob(h.url, jobId, (j) => j.stage === 'transcribing');
    await kill(b);

    // No worker: the result is stored and signalled; the backend is answered 200 once the wait runs out.
    const answer = await h.asr.complete(submission, [{ start: 0, end: 1, text: 'survived two crashes' }]);
    expect(answer).toEqual({ status: 200, body: { ok: true } });
    expect((await getJob(h.url, jobId)).status).toBe('processing');
    const [pending] = await h.stack.orm.em.fork().find(TranscriptionWebhook, { jobId });
    expect(pending).toMatchObject({ outcome: 'pending', asrJobId: submission.id });

    await startWorker();
    const done = await waitForJob(h.url, jobId, (j) => j.status === 'done', 60_000);
    expect(done.segments.map((s: { text: string }) => s.text)).toEqual(['survived two crashes']);
    const [applied] = await h.stack.orm.em.fork().find(TranscriptionWebhook, { jobId });
    expect(applied).toMatchObject({ outcome: 'applied', payload: null });
    expect(h.asr.attempts.map((x) => x.status)).toEqual([503, 202]);
  });
});
