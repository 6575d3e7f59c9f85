import {
  ApplicationFailure,
  CancellationScope,
  condition,
  defineSignal,
  isCancellation,
  patched,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { PushActivities } from '../activities/push.js';
import type { TranscriptionActivities } from './activities.js';
import type { PlaylistActivities } from './playlist-activities.js';
import type { TranscriptExtraActivities } from './derived/activities.js';
import { failureType, isJobStopped } from '../jobs/contract.js';
import {
  ASR_WEBHOOK_SIGNAL,
  isSyncBackend,
  type RunRef,
  type PlaylistInput,
  SUMMARY_FOR_EVERY_JOB_PATCH,
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
  const run = new TranscriptionRun(input);
  setHandler(asrWebhookSignal, (notice) => {
    run.notices.push(notice);
  });
  return runJob(input.jobId, () => run.run());
}

/** The activities of a job, each kind of step with its own timeouts and retries. */
function jobActivities(limits: TranscriptionInput['limits']) {
  return {
    book: proxyJobActivities<TranscriptionActivities>({ startToCloseTimeout: '1 minute', retry: JOB_ACTIVITY_RETRY }),
    media: proxyJobActivities<TranscriptionActivities>({
      startToCloseTimeout: limits.mediaTimeoutMs,
      heartbeatTimeout: limits.heartbeatTimeoutMs,
      retry: externalCallRetry(3),
    }),
    backend: proxyJobActivities<TranscriptionActivities>({
      startToCloseTimeout: limits.mediaTimeoutMs,
      heartbeatTimeout: limits.heartbeatTimeoutMs,
      retry: externalCallRetry(5),
    }),
    modelWait: proxyJobActivities<TranscriptionActivities>({
      startToCloseTimeout: limits.modelWaitMaxMs + 30_000,
      heartbeatTimeout: limits.heartbeatTimeoutMs,
      retry: externalCallRetry(3),
    }),
    // Writing the transcript: a few quick tries; what still fails then is a processing error (the job fails). A
    // local activity: it runs on the worker that took the signal, with no task-queue round trip, so a result is
    // stored as soon as it arrives even when the queue is busy with other jobs' downloads and conversions.
    finalize: proxyLocalJobActivities<TranscriptionActivities>({
      startToCloseTimeout: '5 minutes',
      retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumAttempts: 3, nonRetryableErrorTypes: ['PermanentError'] },
    }),
    push: proxyJobActivities<PushActivities>({ startToCloseTimeout: '1 minute', retry: externalCallRetry(3) }),
    extras: proxyJobActivities<TranscriptExtraActivities>({ startToCloseTimeout: '1 minute', retry: JOB_ACTIVITY_RETRY }),
  };
}

/** Each step reports its own stage (progress and a `status` event) when it starts: no extra activity per stage. */
const stage = (progress: number, name: string, detail: string | null = null): StageNote => ({ progress, stage: name, stageDetail: detail });

type Audio = Awaited<ReturnType<TranscriptionActivities['transcriptionPrepareAudio']>>;

/** One run of a transcription job: its steps, the webhook calls that arrived, and the backend job it submitted. */
class TranscriptionRun {
  readonly notices: WebhookNotice[] = [];
  private readonly ref: RunRef;
  private readonly a: ReturnType<typeof jobActivities>;
  private asrJobId: string | undefined;

  constructor(private readonly input: TranscriptionInput) {
    this.ref = { jobId: input.jobId, runId: workflowInfo().runId };
    this.a = jobActivities(input.limits);
  }

  async run(): Promise<TranscriptionResult> {
    try {
      return await this.pipeline();
    } catch (err) {
      if (isJobStopped(err)) return { outcome: 'stopped' };
      if (isCancellation(err) && this.asrJobId) {
        const id = this.asrJobId;
        await CancellationScope.nonCancellable(() => this.a.book.transcriptionCancelBackend({ jobId: this.input.jobId, asrJobId: id }));
      }
      throw err;
    } finally {
      await CancellationScope.nonCancellable(() => this.cleanup());
    }
  }

  private async pipeline(): Promise<TranscriptionResult> {
    const acquire = await this.captions();
    if ('outcome' in acquire) return acquire;
    const source = await this.a.media.transcriptionAcquireMedia({ ...this.ref, note: acquire });
    const mode = this.input.mode;
    const audio = await this.a.media.transcriptionPrepareAudio({
      ...this.ref,
      media: source.file,
      mode,
      note: stage(30, 'preparing', mode === 'auto' ? 'Measuring the audio' : `Processing the audio (${mode})`),
    });

    // A synchronous backend answers each request with the transcript: no submission, no webhook.
    if (isSyncBackend(this.input.backend)) {
      const { media, backend, finalize } = this.a;
      const direct = await transcribeSynchronously(this.ref, { audio: audio.file, backend: this.input.backend, limits: this.input.limits }, { media, backend, finalize });
      if (direct.result === 'stopped') return { outcome: 'stopped' };
      await this.notify(direct.title);
      return { outcome: 'done', transcriptSource: 'asr' };
    }
    await this.submit(audio);
    return this.awaitResult();
  }

  /**
   * A URL's captions: a non-empty caption file finishes the job. Otherwise, the stage of getting the audio (an upload
   * is read; a URL's audio is downloaded).
   */
  private async captions(): Promise<StageNote | TranscriptionResult> {
    if (this.input.sourceKind !== 'url') return stage(15, 'reading', 'Reading the uploaded file');
    let captions: Awaited<ReturnType<TranscriptionActivities['transcriptionCaptions']>>;
    try {
      captions = await this.a.media.transcriptionCaptions({ ...this.ref, note: stage(5, 'captions', 'Looking for captions') });
    } catch (err) {
      // A URL no extractor takes fails the job now; a failure only to get captions falls through to the audio.
      if (isCancellation(err) || isJobStopped(err) || failureType(err) === 'PermanentError') throw err;
      captions = { result: 'none', reason: failureMessage(err) };
    }
    if (captions.result === 'done') {
      await this.notify(captions.title);
      return { outcome: 'done', transcriptSource: 'captions' };
    }
    if (captions.result === 'stopped') return { outcome: 'stopped' };
    return stage(15, 'downloading', `No usable captions (${captions.reason}); downloading the audio`);
  }

  /** Submits the audio, waiting for the model while the backend answers that it is loading it (bounded). */
  private async submit(audio: Audio): Promise<void> {
    const limits = this.input.limits;
    for (let attempt = 0; ; attempt++) {
      const submitted = await this.a.backend.transcriptionSubmit({
        ...this.ref,
        audio: audio.file,
        note: stage(40, 'submitting', attempt ? `Submitting again (attempt ${attempt + 1})` : `Submitting ${audio.mode} audio`),
      });
      if (submitted.kind === 'accepted') {
        this.asrJobId = submitted.asrJobId;
        return;
      }
      if (attempt >= limits.maxResubmits) {
        throw ApplicationFailure.nonRetryable(
          `The transcription backend was still loading its model after ${attempt + 1} submissions`,
          'ModelNotReady',
        );
      }
      const retryAfterMs = Math.min(Math.max(0, submitted.retryAfterMs), limits.modelWaitMaxMs);
      const startedAt = Date.now();
      const waited = await this.a.modelWait.transcriptionWaitForModel({
        ...this.ref,
        maxWaitMs: limits.modelWaitMaxMs,
        note: stage(40, 'waiting-for-model', `The backend is loading its model (retry after ${Math.round(retryAfterMs / 1000)} s)`),
      });
      // No ready message (stream unreachable, or closed without one): resubmit once Retry-After has passed.
      if (waited.outcome !== 'ready') {
        const rest = retryAfterMs - (Date.now() - startedAt);
        if (rest > 0) await sleep(rest);
      }
    }
  }

  /** The backend's webhook calls (signals), until one for the current backend job is applied; stale ones are ignored. */
  private async awaitResult(): Promise<TranscriptionResult> {
    const { jobId, limits } = this.input;
    const asrJobId = this.asrJobId!;
    const deadline = Date.now() + limits.webhookTimeoutMs;
    for (;;) {
      const arrived = await condition(() => this.notices.length > 0, Math.max(1, deadline - Date.now()));
      if (!arrived) {
        await this.a.book.transcriptionCancelBackend({ jobId, asrJobId });
        throw ApplicationFailure.nonRetryable(
          `The transcription backend sent no result within ${Math.round(limits.webhookTimeoutMs / 1000)} s of the submission`,
          'WebhookTimeout',
        );
      }
      const notice = this.notices.shift()!;
      if (notice.asrJobId && notice.asrJobId !== asrJobId) {
        await this.a.book.transcriptionIgnoreWebhooks({
          deliveryIds: [notice.deliveryId],
          reason: `stale: for backend job ${notice.asrJobId}, the current one is ${asrJobId}`,
        });
        continue;
      }
      const applied = await this.apply(notice);
      if (applied.result === 'ignored') continue;
      if (applied.result === 'stopped') return { outcome: 'stopped' };
      if (applied.result === 'failed') throw ApplicationFailure.nonRetryable(applied.error, 'BackendFailed');
      await this.notify(applied.title);
      return { outcome: 'done', transcriptSource: 'asr', asrJobId };
    }
  }

  /** Stores a webhook call's transcript; one that cannot be processed fails the job. */
  private async apply(notice: WebhookNotice) {
    try {
      return await this.a.finalize.transcriptionApplyWebhook({ ...this.ref, deliveryId: notice.deliveryId });
    } catch (err) {
      if (isCancellation(err)) throw err;
      const message = `Could not process the transcription backend's result: ${failureMessage(err)}`;
      await this.a.book.transcriptionFailWebhook({ ...this.ref, deliveryId: notice.deliveryId, error: message });
      throw ApplicationFailure.nonRetryable(message, 'WebhookProcessingFailed');
    }
  }

  private async notify(title: string): Promise<void> {
    const jobId = this.input.jobId;
    try {
      await this.a.push.sendPushNotification({
        payload: { title: 'Transcript ready', body: title, tag: `transcription:${jobId}`, data: { kind: 'transcription', jobId, url: `/api/jobs/${jobId}` } },
      });
    } catch {
      // The transcript is done whatever happens to the notification.
    }
    // TRANSCRIPTION_SUMMARY: a summary of every transcript, its own job (transcription/derived/).
    if (this.input.summaryForEveryJob && patched(SUMMARY_FOR_EVERY_JOB_PATCH)) {
      try {
        await this.a.extras.transcriptExtraRequestSummary({ transcriptionJobId: jobId });
      } catch {
        // The transcript is done whatever happens to its summary; POST /api/jobs/:id/summary asks again.
      }
    }
  }

  /** Calls that arrived after the one that counted change nothing; their callers are answered now. */
  private async cleanup(): Promise<void> {
    if (this.notices.length) {
      await this.a.book.transcriptionIgnoreWebhooks({ deliveryIds: this.notices.splice(0).map((n) => n.deliveryId), reason: 'the job already ended' });
    }
    await this.a.book.transcriptionCleanup({ jobId: this.input.jobId, runId: this.ref.runId });
  }
}

/**
 * A playlist or channel URL becomes one job per entry (docs/transcription.md, "Playlists"): yt-dlp lists it, then the
 * jobs are created (ids derived from the entries, so a retried step neither loses nor doubles one) and each runs
 * its own transcriptionWorkflow. A listing that fails (no playlist, empty, an address the guard refuses) fails the
 * group with its code; cancelling the group (DELETE /api/playlists/:id) stops this too.
 */
export async function transcriptionPlaylistWorkflow(input: PlaylistInput): Promise<{ jobs: number; outcome: 'expanded' | 'failed' | 'cancelled' }> {
  const list = proxyJobActivities<PlaylistActivities>({
    startToCloseTimeout: input.limits.mediaTimeoutMs,
    heartbeatTimeout: input.limits.heartbeatTimeoutMs,
    retry: externalCallRetry(3),
  });
  const book = proxyJobActivities<PlaylistActivities>({ startToCloseTimeout: '10 minutes', heartbeatTimeout: '1 minute', retry: JOB_ACTIVITY_RETRY });
  try {
    const listing = await list.transcriptionListPlaylist({ groupId: input.groupId });
    if ('cancelled' in listing) return { jobs: 0, outcome: 'cancelled' };
    const made = await book.transcriptionCreatePlaylistJobs({ groupId: input.groupId, listing });
    return { jobs: made.jobs, outcome: made.cancelled ? 'cancelled' : 'expanded' };
  } catch (err) {
    if (isCancellation(err)) return { jobs: 0, outcome: 'cancelled' };
    const error = failureMessage(err);
    await CancellationScope.nonCancellable(() => book.transcriptionFailPlaylist({ groupId: input.groupId, error }));
    return { jobs: 0, outcome: 'failed' };
  }
}
// Translations and summaries of finished transcripts run on the same queue, in the same bundle.
export { transcriptExtraWorkflow } from './derived/workflow.js';
