import { Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleOption } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryLater } from '../../activities/retry-later.js';
import { PermanentError, RecoverableError } from '../../core/errors.js';
import type { RecipeActivities } from '../../recipes/activities.js';
import type { RecipeLimits, StepInput } from '../../recipes/contract.js';
import { recipeWorkflow } from '../../recipes/workflow.js';
import { slotGrantedSignal, type SlotRequest } from '../../jobs/slot-contract.js';
import { createTimeSkippingEnv, jobActivityStubs, testWorkflowBundle, withWorker } from '../support/time-skipping.js';

/**
 * recipes/workflow.ts with its activities as plain functions, on Temporal's time-skipping test server: the retry
 * policy's waits (QUEUE_RETRY_BACKOFF_MS doubling to a minute, or the server's Retry-After) pass in skipped time.
 */
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundleOption;
beforeAll(async () => {
  [env, bundle] = await Promise.all([createTimeSkippingEnv(), testWorkflowBundle()]);
});
afterAll(() => env?.teardown());

const MINUTE = 60_000;
type Phase = 'recipeExtract' | 'recipeParse' | 'recipeUpload';
/** Each phase's attempts: when they ran, by the server's (skipped) clock. */
type Attempts = Record<Phase, number[]>;

/**
 * Runs one item. `phase` decides each attempt of a phase (throw to fail it); everything else succeeds. The slot is
 * granted at once (the pool has its own tests, test/workflows/slots.timeskip.test.ts).
 */
async function runItem(limits: RecipeLimits, phase: (name: Phase, attempt: number) => void) {
  const jobs = jobActivityStubs();
  const attempts: Attempts = { recipeExtract: [], recipeParse: [], recipeUpload: [] };
  const failed: Parameters<RecipeActivities['recipeFail']>[0][] = [];
  const step = (name: Phase) => async (_input: StepInput) => {
    attempts[name].push(await env.currentTimeMs());
    phase(name, Context.current().info.attempt);
    return undefined;
  };
  const activities = {
    ...jobs.activities,
    async requestSlot({ request }: { pool: string; request: SlotRequest }) {
      await env.client.workflow.getHandle(request.workflowId, request.runId).signal(slotGrantedSignal, request.requestId);
      return { workflowId: 'slots:none', runId: 'none', checkMs: 10 * MINUTE };
    },
    recipeExtract: step('recipeExtract'),
    recipeParse: step('recipeParse'),
    recipeUpload: async (input: StepInput) => {
      await step('recipeUpload')(input);
      return { recipeManagerUrl: 'https://recipes.test/r/1', notice: { title: 'Recipe saved', body: 'Soup' } };
    },
    async recipeFail(input: Parameters<RecipeActivities['recipeFail']>[0]) {
      failed.push(input);
      return null;
    },
    recipeCleanup: async () => undefined,
    sendPushNotification: async () => ({ sent: 0, removed: 0, failed: 0 }),
  };
  const taskQueue = `recipes-${Math.random().toString(36).slice(2)}`;
  const startedAt = await env.currentTimeMs();
  const outcome = await withWorker(env, { taskQueue, bundle, activities }, () =>
    env.client.workflow
      .execute(recipeWorkflow, { taskQueue, workflowId: `recipe:${taskQueue}`, args: [{ itemId: 'item-1', limits }] })
      .catch((err: unknown) => err),
  );
  const since = (list: number[]) => list.map((t) => t - startedAt);
  return {
    outcome,
    jobs: jobs.record,
    failed,
    attempts: { recipeExtract: since(attempts.recipeExtract), recipeParse: since(attempts.recipeParse), recipeUpload: since(attempts.recipeUpload) },
  };
}

/** The gaps between consecutive attempts, rounded to seconds (the server's clock moves a little on its own). */
const gaps = (times: number[]) => times.slice(1).map((t, i) => Math.round((t - times[i]!) / 1000));

describe('recipe workflow retries (time-skipping)', () => {
  it('retries a recoverable failure after the Retry-After its server asked for, and the item succeeds', async () => {
    const r = await runItem({ timeoutMs: MINUTE, retryAttempts: 3, retryBackoffMs: 1000 }, (name, attempt) => {
      if (name === 'recipeParse' && attempt < 3) throw retryLater(new RecoverableError('503 from the model', 20 * MINUTE), 30 * MINUTE);
    });
    expect(r.outcome).toEqual({ status: 'success', recipeManagerUrl: 'https://recipes.test/r/1' });
    expect(gaps(r.attempts.recipeParse)).toEqual([1200, 1200]); // Retry-After, not the 1 s backoff
    expect(r.attempts.recipeUpload).toHaveLength(1);
    expect(r.failed).toEqual([]);
    expect(r.jobs.finished).toEqual([]); // the upload phase records the ending itself
  });

  it('backs off from QUEUE_RETRY_BACKOFF_MS, doubling up to a minute, and ends `unhealthy` after QUEUE_RETRY_ATTEMPTS', async () => {
    const r = await runItem({ timeoutMs: MINUTE, retryAttempts: 5, retryBackoffMs: 20_000 }, (name) => {
      if (name === 'recipeExtract') throw new RecoverableError('the page answered 502');
    });
    expect(gaps(r.attempts.recipeExtract)).toEqual([20, 40, 60, 60]);
    expect(r.attempts.recipeParse).toEqual([]);
    expect(r.failed).toEqual([
      expect.objectContaining({ status: 'unhealthy', error: 'the page answered 502 (gave up after 5 attempts; the item can be retried)' }),
    ]);
    expect(r.outcome).toBeInstanceOf(WorkflowFailedError);
    expect((r.outcome as WorkflowFailedError).cause).toMatchObject({ type: 'RecipeUnhealthy' });
  });

  it('fails a permanent failure at once, with no retry and no time passing', async () => {
    const r = await runItem({ timeoutMs: MINUTE, retryAttempts: 5, retryBackoffMs: 20_000 }, (name) => {
      if (name === 'recipeParse') throw new PermanentError('No recipe in the post');
    });
    expect(r.attempts.recipeParse).toHaveLength(1);
    expect(r.attempts.recipeUpload).toEqual([]);
    expect(r.failed).toEqual([expect.objectContaining({ status: 'error', error: 'No recipe in the post' })]);
    expect((r.outcome as WorkflowFailedError).cause).toMatchObject({ type: 'RecipeError' });
  });
});
