import { ApplicationFailure, CancellationScope, isCancellation, workflowInfo } from '@temporalio/workflow';
import type { PushActivities } from '../../activities/push.js';
import { isJobStopped } from '../../jobs/contract.js';
import { proxyJobActivities } from '../../workflows/activities.js';
import { failureMessage, runJob } from '../../workflows/job-lifecycle.js';
import { externalCallRetry, JOB_ACTIVITY_RETRY } from '../../workflows/retry-policy.js';
import type { TranscriptExtraActivities } from './activities.js';
import type { ExtraInput } from './contract.js';

/**
 * A translation or a summary of a finished transcript (docs/transcription.md, "Translations and summaries"), as its
 * own job: the transcript snapshotted -> each chunk to the language model in turn (an answer that drops or merges
 * lines, or is in the wrong language, is asked again, up to TRANSCRIPT_LLM_ATTEMPTS) -> the files written and the
 * result stored with `done` -> a push notification. Cancelling the workflow aborts the request in flight;
 * `runJob` records how it ended.
 */
export async function transcriptExtraWorkflow(input: ExtraInput): Promise<{ outcome: 'done' | 'stopped' }> {
  const { limits } = input;
  // A transcript that is gone or not done (PermanentError) is not waited for.
  const book = proxyJobActivities<TranscriptExtraActivities>({ startToCloseTimeout: '2 minutes', retry: { ...JOB_ACTIVITY_RETRY, nonRetryableErrorTypes: ['PermanentError'] } });
  const model = proxyJobActivities<TranscriptExtraActivities>({
    startToCloseTimeout: limits.requestTimeoutMs + 60_000,
    heartbeatTimeout: limits.heartbeatTimeoutMs,
    retry: externalCallRetry(limits.attempts),
  });
  const push = proxyJobActivities<PushActivities>({ startToCloseTimeout: '1 minute', retry: externalCallRetry(3) });
  const ref = { jobId: input.jobId, runId: workflowInfo().runId };
  const what = input.task === 'translation' ? `The translation into ${input.language}` : 'The summary';
  let recorded = false;

  return runJob(
    input.jobId,
    async () => {
      try {
        const { chunks } = await book.transcriptExtraPrepare(ref);
        for (let index = 0; index < chunks; index++) {
          try {
            await model.transcriptExtraChunk({ ...ref, index });
          } catch (err) {
            if (isCancellation(err) || isJobStopped(err)) throw err;
            const part = chunks > 1 ? ` at part ${index + 1} of ${chunks}` : '';
            throw ApplicationFailure.nonRetryable(`${what} failed${part}: ${failureMessage(err)}`, 'ExtraFailed');
          }
        }
        const done = await model.transcriptExtraFinish(ref);
        recorded = true;
        if (done.result === 'stopped') return { outcome: 'stopped' as const };
        try {
          const title = input.task === 'translation' ? 'Translation ready' : 'Summary ready';
          const body = input.task === 'translation' ? `${done.title} (${input.language})` : done.title;
          const url = `/api/jobs/${input.transcriptionJobId}`;
          await push.sendPushNotification({ payload: { title, body, tag: `transcript-${input.task}:${input.jobId}`, data: { kind: `transcript-${input.task}`, jobId: input.transcriptionJobId, url } } });
        } catch {
          // The result is stored whatever happens to the notification.
        }
        return { outcome: 'done' as const };
      } finally {
        await CancellationScope.nonCancellable(() => book.transcriptExtraCleanup(ref));
      }
    },
    { recorded: () => recorded },
  );
}
