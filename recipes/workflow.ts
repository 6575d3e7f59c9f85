import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  executeChild,
  isCancellation,
  workflowInfo,
} from '@temporalio/workflow';
import type { PushActivities } from '../activities/push.js';
import type { RecipeActivities } from './activities.js';
import { isJobStopped, jobSearchAttributes } from '../jobs/contract.js';
import type { PushPayload } from '../push/service.js';
import { ATTEMPT_GRACE_MS, type RecipeInput, type RecipeOutcome, SPEECH_ERROR, SPEECH_UNHEALTHY, type StepInput } from './contract.js';
import { TRANSCRIPTION_KIND, TRANSCRIPTION_WORKFLOW } from '../transcription/contract.js';
import { proxyJobActivities } from '../workflows/activities.js';
import { failureMessage, runJob } from '../workflows/job-lifecycle.js';
import { externalCallRetry, JOB_ACTIVITY_RETRY } from '../workflows/retry-policy.js';

/**
 * One recipe queue item, one run (docs/recipes.md): a slot of the `recipes` pool (QUEUE_CONCURRENCY; none
 * while QUEUE_PROCESSING_ENABLED is false), then extraction -> parsing -> uploading, each an activity with at most
 * QUEUE_RETRY_ATTEMPTS attempts of QUEUE_TIMEOUT_MS for recoverable failures. A permanent failure ends the item
 * `error` at once; recoverable ones that use up the attempts end it `unhealthy`. The ending is written inside the
 * slot, so the pool's next item starts only after it; the push notification goes after the slot is given back.
 */
export async function recipeWorkflow(input: RecipeInput): Promise<RecipeOutcome> {
  const { itemId, limits } = input;
  const phases = proxyJobActivities<RecipeActivities>({
    startToCloseTimeout: limits.timeoutMs + ATTEMPT_GRACE_MS,
    retry: externalCallRetry(limits.retryAttempts, { initialIntervalMs: limits.retryBackoffMs }),
  });
  const book = proxyJobActivities<RecipeActivities>({ startToCloseTimeout: '1 minute', retry: JOB_ACTIVITY_RETRY });
  const push = proxyJobActivities<PushActivities>({ startToCloseTimeout: '1 minute', retry: externalCallRetry(3) });

  const step = (): StepInput => ({ itemId, runId: workflowInfo().runId, timeoutMs: limits.timeoutMs });
  let notice: PushPayload | null = null;
  /** The item's ending is written (by the last phase, or recipeFail), or someone else ended it. */
  let recorded = false;

  const pipeline = async (): Promise<RecipeOutcome> => {
    try {
      const extracted = await phases.recipeExtract(step());
      // The video's speech, before parsing (the caption only points to it), or after the model found no recipe in the caption.
      if (extracted?.speech === 'now') await speechStep(phases, step);
      const parsed = await phases.recipeParse({ ...step(), ...(extracted?.speech === 'fallback' && { speechFallback: true }) });
      if (parsed?.noRecipe) {
        await speechStep(phases, step);
        await phases.recipeParse(step());
      }
      const uploaded = await phases.recipeUpload(step());
      recorded = true;
      notice = uploaded.notice;
      return { status: 'success', recipeManagerUrl: uploaded.recipeManagerUrl };
    } catch (err) {
      if (isCancellation(err)) throw err;
      if (isJobStopped(err)) {
        recorded = true;
        return { status: 'stopped' };
      }
      const speech = err instanceof ApplicationFailure && (err.type === SPEECH_ERROR || err.type === SPEECH_UNHEALTHY) ? err : undefined;
      const permanent = speech ? speech.type === SPEECH_ERROR : err instanceof ActivityFailure && err.retryState === 'NON_RETRYABLE_FAILURE';
      const message = failureMessage(err);
      const error = permanent || speech
        ? message
        : `${message} (gave up after ${limits.retryAttempts} attempt${limits.retryAttempts === 1 ? '' : 's'}; the item can be retried)`;
      notice = await book.recipeFail({ itemId, runId: workflowInfo().runId, status: permanent ? 'error' : 'unhealthy', error });
      recorded = true;
      throw ApplicationFailure.nonRetryable(error, permanent ? 'RecipeError' : 'RecipeUnhealthy');
    }
  };

  try {
    // The ending is written inside the slot (the pool's next item starts after it) and is the run's last write.
    return await runJob(itemId, pipeline, { slot: 'recipes', recorded: () => recorded });
  } finally {
    await CancellationScope.nonCancellable(async () => {
      await book.recipeCleanup({ itemId, runId: workflowInfo().runId }).catch(() => undefined);
      const payload = notice;
      // The item has ended whatever happens to the notification.
      if (payload) await push.sendPushNotification({ payload }).catch(() => undefined);
    });
  }
}

/**
 * The speech step (recipes/speech.ts): the item's transcription job, run as this workflow's child on the
 * transcription task queue unless an earlier attempt or run finished it; then its transcript joins the item's text.
 * Cancelling the item cancels the child (and the backend job). A child that failed ends the item `error` when it
 * failed for good, `unhealthy` when a retry may succeed.
 */
async function speechStep(phases: ReturnType<typeof proxyJobActivities<RecipeActivities>>, step: () => StepInput): Promise<void> {
  const start = await phases.recipeSpeechStart(step());
  if (start.kind === 'transcribe') {
    try {
      const child = jobSearchAttributes({ id: start.jobId, kind: TRANSCRIPTION_KIND }, start.subject);
      await executeChild(TRANSCRIPTION_WORKFLOW, {
        workflowId: start.workflowId,
        taskQueue: start.taskQueue,
        args: [start.input],
        // Found in the Temporal UI like any job's workflow.
        typedSearchAttributes: child.typedSearchAttributes,
        memo: { ...child.memo, recipeItemId: step().itemId },
      });
    } catch (err) {
      if (isCancellation(err) || isJobStopped(err)) throw err;
      const child = err instanceof ChildWorkflowFailure ? err : undefined;
      const cause = child?.cause instanceof ApplicationFailure ? child.cause : undefined;
      const failed = await phases.recipeSpeechFailed({
        ...step(),
        jobId: start.jobId,
        workflowId: start.workflowId,
        childRunId: child?.execution.runId ?? undefined,
        message: failureMessage(err),
        type: cause?.type ?? undefined,
      });
      throw ApplicationFailure.nonRetryable(failed.error, failed.permanent ? SPEECH_ERROR : SPEECH_UNHEALTHY);
    }
  }
  await phases.recipeSpeechFinish({ ...step(), jobId: start.jobId });
}
