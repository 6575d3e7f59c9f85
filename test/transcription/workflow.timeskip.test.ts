import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleOption } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AsrBackendKind } from '../../transcription/configuration.js';
import type { ModelWaitOutcome } from '../../transcription/asr-client.js';
import type { TranscriptionLimits } from '../../transcription/contract.js';
import type { SyncChunk } from '../../transcription/sync-activities.js';
import { asrWebhookSignal, transcriptionWorkflow } from '../../transcription/workflow.js';
import { createTimeSkippingEnv, jobActivityStubs, testWorkflowBundle, withWorker } from '../support/time-skipping.js';

/**
 * transcription/workflow.ts and sync-workflow.ts with their activities as plain functions, on Temporal's
 * time-skipping test server: a backend that answers 503 while its model loads is waited for over hours of skipped
 * time (test/transcription/model-wait.test.ts covers the same against a fake backend, in seconds).
 */
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundleOption;
beforeAll(async () => {
  [env, bundle] = await Promise.all([createTimeSkippingEnv(), testWorkflowBundle()]);
});
afterAll(() => env?.teardown());

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const limits = (o: Partial<TranscriptionLimits>): TranscriptionLimits => ({
  modelWaitMaxMs: HOUR,
  maxResubmits: 10,
  webhookTimeoutMs: 6 * HOUR,
  heartbeatTimeoutMs: MINUTE,
  mediaTimeoutMs: 10 * MINUTE,
  ...o,
});

/** How the fake backend behaves: busy (503 + Retry-After) for its first `busyFor` requests, then it takes them. */
interface Backend {
  busyFor: number;
  retryAfterMs: number;
  /** What following its model events ends with (the callback backend only). */
  modelEvents?: ModelWaitOutcome;
}

/** Runs one upload job to its end. Answers its outcome (or failure), the server time of each request, the bookkeeping. */
async function runJob(backendKind: AsrBackendKind, jobLimits: TranscriptionLimits, backend: Backend, chunkCount = 1) {
  const jobs = jobActivityStubs();
  const requests: { at: number; chunk?: number }[] = [];
  const taskQueue = `transcription-${Math.random().toString(36).slice(2)}`;
  const workflowId = `transcription:${taskQueue}`;
  /** Busy answers in a row, per chunk: each chunk has its own TRANSCRIPTION_MAX_RESUBMITS. */
  const busy = new Map<number, number>();
  const answer = async (chunk: number) => {
    requests.push({ at: await env.currentTimeMs(), chunk });
    const n = busy.get(chunk) ?? 0;
    if (n >= backend.busyFor) return undefined;
    busy.set(chunk, n + 1);
    return { kind: 'busy' as const, retryAfterMs: backend.retryAfterMs };
  };
  const chunks: SyncChunk[] = Array.from({ length: chunkCount }, (_, i) => ({ file: `c${i}.wav`, result: `c${i}.json`, start: i * 600, seconds: 600, bytes: 1000 }));
  const activities = {
    ...jobs.activities,
    transcriptionAcquireMedia: async () => ({ file: 'upload.wav', bytes: 1000 }),
    transcriptionPrepareAudio: async () => ({ file: 'audio.wav', bytes: 1000, mode: 'none', reason: 'as uploaded' }),
    async transcriptionSubmit() {
      const busyAnswer = await answer(0);
      if (busyAnswer) return busyAnswer;
      // A fast backend: its webhook call arrives before the submission's answer (the workflow keeps it till then).
      await env.client.workflow.getHandle(workflowId).signal(asrWebhookSignal, { deliveryId: 'delivery-1', asrJobId: 'asr-1' });
      return { kind: 'accepted' as const, asrJobId: 'asr-1' };
    },
    transcriptionWaitForModel: async () => ({ outcome: backend.modelEvents ?? 'unreachable', waitedMs: 0 }),
    transcriptionApplyWebhook: async () => ({ result: 'done' as const, title: 'Talk', segmentCount: 3 }),
    transcriptionSplitAudio: async () => ({ chunks, label: backendKind }),
    transcriptionTranscribeChunk: async ({ index }: { index: number }) => (await answer(index)) ?? { kind: 'done' as const, segments: 3 },
    transcriptionFinishChunks: async () => ({ result: 'done' as const, title: 'Talk', segmentCount: 3 }),
    transcriptionIgnoreWebhooks: async () => undefined,
    transcriptionCancelBackend: async () => ({ ok: true, detail: 'cancelled' }),
    transcriptionCleanup: async () => ({ removedUpload: true }),
    sendPushNotification: async () => ({ sent: 0, removed: 0, failed: 0 }),
  };
  const startedAt = await env.currentTimeMs();
  const outcome = await withWorker(env, { taskQueue, bundle, activities }, () =>
    env.client.workflow
      .execute(transcriptionWorkflow, {
        taskQueue,
        workflowId,
        args: [{ jobId: 'job-1', sourceKind: 'upload', mode: 'none', backend: backendKind, limits: jobLimits }],
      })
      .catch((err: unknown) => err),
  );
  const elapsedMs = (await env.currentTimeMs()) - startedAt;
  return { outcome, jobs: jobs.record, requests, elapsedMs };
}

/** Minutes between consecutive requests (the server's clock moves a little on its own between them). */
const gaps = (requests: { at: number }[]) => requests.slice(1).map((r, i) => Math.round((r.at - requests[i]!.at) / MINUTE));

describe('transcription: waiting for the backend to load its model (time-skipping)', () => {
  it('resubmits every Retry-After while the model loads, for hours, and finishes once it is ready', async () => {
    const r = await runJob('callback', limits({}), { busyFor: 5, retryAfterMs: 40 * MINUTE });
    expect(r.outcome).toEqual({ outcome: 'done', transcriptSource: 'asr', asrJobId: 'asr-1' });
    expect(gaps(r.requests)).toEqual([40, 40, 40, 40, 40]);
    expect(r.elapsedMs).toBeGreaterThanOrEqual(200 * MINUTE);
    expect(r.jobs.finished).toEqual([expect.objectContaining({ jobId: 'job-1', outcome: 'done' })]);
  });

  it('waits no longer than TRANSCRIPTION_MODEL_WAIT_MAX_MS, whatever Retry-After asks', async () => {
    const r = await runJob('callback', limits({ modelWaitMaxMs: 45 * MINUTE }), { busyFor: 3, retryAfterMs: 5 * HOUR });
    expect(gaps(r.requests)).toEqual([45, 45, 45]);
    expect(r.outcome).toMatchObject({ outcome: 'done' });
  });

  it('resubmits as soon as the model events say ready, without waiting out Retry-After', async () => {
    const r = await runJob('callback', limits({}), { busyFor: 2, retryAfterMs: HOUR, modelEvents: 'ready' });
    expect(gaps(r.requests)).toEqual([0, 0]);
    expect(r.outcome).toMatchObject({ outcome: 'done' });
  });

  it('gives up after TRANSCRIPTION_MAX_RESUBMITS resubmissions, and the job fails saying why', async () => {
    const r = await runJob('callback', limits({ maxResubmits: 3 }), { busyFor: Infinity, retryAfterMs: 30 * MINUTE });
    expect(gaps(r.requests)).toEqual([30, 30, 30]);
    expect(r.outcome).toBeInstanceOf(WorkflowFailedError);
    const message = 'The transcription backend was still loading its model after 4 submissions';
    expect((r.outcome as WorkflowFailedError).cause).toMatchObject({ type: 'ModelNotReady', message });
    expect(r.jobs.finished).toEqual([expect.objectContaining({ outcome: 'failed', error: message })]);
  });
});

describe('transcription by a synchronous backend: 503 per chunk (time-skipping)', () => {
  it('sends each chunk again after Retry-After, counting the resubmissions of each chunk on their own', async () => {
    // Each chunk is refused TRANSCRIPTION_MAX_RESUBMITS times in a row: the job still finishes.
    const r = await runJob('openai', limits({ maxResubmits: 3 }), { busyFor: 3, retryAfterMs: 20 * MINUTE }, 2);
    expect(r.outcome).toEqual({ outcome: 'done', transcriptSource: 'asr' });
    expect(r.requests.map((q) => q.chunk)).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    expect(gaps(r.requests)).toEqual([20, 20, 20, 0, 20, 20, 20]);
    expect(r.jobs.finished).toEqual([expect.objectContaining({ outcome: 'done' })]);
  });

  it('gives up on a chunk refused more than TRANSCRIPTION_MAX_RESUBMITS times, waiting at most the model-wait limit', async () => {
    const r = await runJob('openai', limits({ maxResubmits: 2, modelWaitMaxMs: 10 * MINUTE }), { busyFor: Infinity, retryAfterMs: HOUR });
    expect(gaps(r.requests)).toEqual([10, 10]);
    const message = 'The transcription backend was still loading its model after 3 requests';
    expect((r.outcome as WorkflowFailedError).cause).toMatchObject({ type: 'ModelNotReady', message });
    expect(r.jobs.finished).toEqual([expect.objectContaining({ outcome: 'failed', error: message })]);
  });
});
