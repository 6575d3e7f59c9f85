import {
  ApplicationFailure,
  CancellationScope,
  condition,
  defineSignal,
  isCancellation,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { PushActivities } from '../activities/push.js';
import type { TranscriptionActivities } from './activities.js';
import { failureType, isJobStopped } from '../jobs/contract.js';
import {
  ASR_WEBHOOK_SIGNAL,
  isSyncBackend,
  type RunRef,
  type StageNote,
  type TranscriptionInput,
  type TranscriptionResult,
  type WebhookNotice,
} from './contract.js';
import { proxyJobActivities, proxyLocalJobActivities } from '../workflows/activities.js';
import { failureMessage, runJob } from '../workflows/job-lifecycle.js';
import { externalCallRetry, JOB_ACTIVITY_RETRY } from '../workflows/retry-policy.js';
import { transcribeSynchronously } from './sync-workflow.js';

/** The API signals each authenticated webhook call; the payload waits in PostgreSQL under `deliveryId`. */
export const asrWebhookSignal = defineSignal<[WebhookNotice]>(ASR_WEBHOOK_SIGNAL);

/**
 * One transcription job, start to end (docs/transcription.md):
 *   URL: captions (a non-empty caption file finishes the job) -> download; upload: the persisted file ->
 *   ffmpeg in the chosen mode -> submit, waiting for the model on 503 (bounded) -> the backend's webhook (a signal;
 *   stale and replayed calls are ignored) -> transcript stored and `done` -> push notification -> cleanup.
 *   A synchronous backend (ASR_BACKEND other than `callback`) replaces submit-and-webhook with its chunks
 *   (sync-workflow.ts).
 * Cancelling the workflow (DELETE /api/jobs/:id) cancels the backend job too. `runJob` records how it ended.
 */
export async function transcriptionWorkflow(input: TranscriptionInput): Promise<TranscriptionResult> {
  const { jobId, limits } = input;
  const notices: WebhookNotice[] = [];
  setHandler(asrWebhookSignal, (notice) => {
    notices.push(notice);
  });

  const book = proxyJobActivities<TranscriptionActivities>({ startToCloseTimeout: '1 minute', retry: JOB_ACTIVITY_RETRY });
  const media = proxyJobActivities<TranscriptionActivities>({
    startToCloseTimeout: limits.mediaTimeoutMs,
    heartbeatTimeout: limits.heartbeatTimeoutMs,
    retry: externalCallRetry(3),
  });
  const backend = proxyJobActivities<TranscriptionActivities>({
    startToCloseTimeout: limits.mediaTimeoutMs,
    heartbeatTimeout: limits.heartbeatTimeoutMs,
    retry: externalCallRetry(5),
  });
  const modelWait = proxyJobActivities<TranscriptionActivities>({
    startToCloseTimeout: limits.modelWaitMaxMs + 30_000,
    heartbeatTimeout: limits.heartbeatTimeoutMs,
    retry: externalCallRetry(3),
  });
  // Writing the transcript: a few quick tries; what still fails then is a processing error (the job fails). A
  // local activity: it runs on the worker that took the signal, with no task-queue round trip, so a result is
  // stored as soon as it arrives even when the queue is busy with other jobs' downloads and conversions.
  const finalize = proxyLocalJobActivities<TranscriptionActivities>({
    startToCloseTimeout: '5 minutes',
    retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumAttempts: 3, nonRetryableErrorTypes: ['PermanentError'] },
  });
  const push = proxyJobActivities<PushActivities>({ startToCloseTimeout: '1 minute', retry: externalCallRetry(3) });

  const ref: RunRef = { jobId, runId: workflowInfo().runId };
  // Each step reports its own stage (progress and a `status` event) when it starts: no extra activity per stage.
  const stage = (progress: number, name: string, detail: string | null = null): StageNote => ({ progress, stage: name, stageDetail: detail });
  let asrJobId: string | undefined;

  const notify = async (title: string) => {
    try {
      await push.sendPushNotification({
        payload: {
          title: 'Transcript ready',
          body: title,
          tag: `transcription:${jobId}`,
          data: { kind: 'transcription', jobId, url: `/api/jobs/${jobId}` },
        },
      });
    } catch {
      // The transcript is done whatever happens to the notification.
    }
  };

  const pipeline = async (): Promise<TranscriptionResult> => {
    let acquire = stage(15, 'reading', 'Reading the uploaded file');
    if (input.sourceKind === 'url') {
      let captions: Awaited<ReturnType<TranscriptionActivities['transcriptionCaptions']>>;
      try {
        captions = await media.transcriptionCaptions({ ...ref, note: stage(5, 'captions', 'Looking for captions') });
      } catch (err) {
        // A URL no extractor takes fails the job now; a failure only to get captions falls through to the audio.
        if (isCancellation(err) || isJobStopped(err) || failureType(err) === 'PermanentError') throw err;
        captions = { result: 'none', reason: failureMessage(err) };
      }
      if (captions.result === 'done') {
        await notify(captions.title);
        return { outcome: 'done', transcriptSource: 'captions' };
      }
      if (captions.result === 'stopped') return { outcome: 'stopped' };
      acquire = stage(15, 'downloading', `No usable captions (${captions.reason}); downloading the audio`);
    }
    const source = await media.transcriptionAcquireMedia({ ...ref, note: acquire });

    const audio = await media.transcriptionPrepareAudio({
      ...ref,
      media: source.file,
      mode: input.mode,
      note: stage(30, 'preparing', input.mode === 'auto' ? 'Measuring the audio' : `Processing the audio (${input.mode})`),
    });

    // A synchronous backend answers each request with the transcript: no submission, no webhook.
    if (isSyncBackend(input.backend)) {
      const direct = await transcribeSynchronously(ref, { audio: audio.file, backend: input.backend, limits }, { media, backend, finalize });
      if (direct.result === 'stopped') return { outcome: 'stopped' };
      await notify(direct.title);
      return { outcome: 'done', transcriptSource: 'asr' };
    }

    for (let attempt = 0; ; attempt++) {
      const submitted = await backend.transcriptionSubmit({
        ...ref,
        audio: audio.file,
        note: stage(40, 'submitting', attempt ? `Submitting again (attempt ${attempt + 1})` : `Submitting ${audio.mode} audio`),
      });
      if (submitted.kind === 'accepted') {
        asrJobId = submitted.asrJobId;
        break;
      }
      if (attempt >= limits.maxResubmits) {
        throw ApplicationFailure.nonRetryable(
          `The transcription backend was still loading its model after ${attempt + 1} submissions`,
          'ModelNotReady',
        );
      }
      const retryAfterMs = Math.min(Math.max(0, submitted.retryAfterMs), limits.modelWaitMaxMs);
      const startedAt = Date.now();
      const waited = await modelWait.transcriptionWaitForModel({
        ...ref,
        maxWaitMs: limits.modelWaitMaxMs,
        note: stage(40, 'waiting-for-model', `The backend is loading its model (retry after ${Math.round(retryAfterMs / 1000)} s)`),
      });
      // No ready message (stream unreachable, or closed without one): resubmit once Retry-After has passed.
      if (waited.outcome !== 'ready') {
        const rest = retryAfterMs - (Date.now() - startedAt);
        if (rest > 0) await sleep(rest);
      }
    }

    const deadline = Date.now() + limits.webhookTimeoutMs;
    for (;;) {
      const arrived = await condition(() => notices.length > 0, Math.max(1, deadline - Date.now()));
      if (!arrived) {
        await book.transcriptionCancelBackend({ jobId, asrJobId: asrJobId! });
        throw ApplicationFailure.nonRetryable(
          `The transcription backend sent no result within ${Math.round(limits.webhookTimeoutMs / 1000)} s of the submission`,
          'WebhookTimeout',
        );
      }
      const notice = notices.shift()!;
      if (notice.asrJobId && notice.asrJobId !== asrJobId) {
        await book.transcriptionIgnoreWebhooks({
          deliveryIds: [notice.deliveryId],
          reason: `stale: for backend job ${notice.asrJobId}, the current one is ${asrJobId}`,
        });
        continue;
      }
      let applied: Awaited<ReturnType<TranscriptionActivities['transcriptionApplyWebhook']>>;
      try {
        applied = await finalize.transcriptionApplyWebhook({ ...ref, deliveryId: notice.deliveryId });
      } catch (err) {
        if (isCancellation(err)) throw err;
        const message = `Could not process the transcription backend's result: ${failureMessage(err)}`;
        await book.transcriptionFailWebhook({ ...ref, deliveryId: notice.deliveryId, error: message });
        throw ApplicationFailure.nonRetryable(message, 'WebhookProcessingFailed');
      }
      if (applied.result === 'ignored') continue;
      if (applied.result === 'stopped') return { outcome: 'stopped' };
      if (applied.result === 'failed') throw ApplicationFailure.nonRetryable(applied.error, 'BackendFailed');
      await notify(applied.title);
      return { outcome: 'done', transcriptSource: 'asr', asrJobId };
    }
  };

  return runJob(jobId, async () => {
    try {
      return await pipeline();
    } catch (err) {
      if (isJobStopped(err)) return { outcome: 'stopped' };
      if (isCancellation(err) && asrJobId) {
        const id = asrJobId;
        await CancellationScope.nonCancellable(() => book.transcriptionCancelBackend({ jobId, asrJobId: id }));
      }
      throw err;
    } finally {
      await CancellationScope.nonCancellable(async () => {
        // Calls that arrived after the one that counted change nothing; their callers are answered now.
        if (notices.length) {
          await book.transcriptionIgnoreWebhooks({ deliveryIds: notices.splice(0).map((n) => n.deliveryId), reason: 'the job already ended' });
        }
        await book.transcriptionCleanup({ jobId, runId: ref.runId });
      });
    }
  });
}
