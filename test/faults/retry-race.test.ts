import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ActivityDeps } from '../../activities/deps.js';
import { createJobActivities } from '../../activities/jobs.js';
import { createRecipeActivities } from '../../recipes/activities.js';
import { createLogger } from '../../core/log.js';
import { Job } from '../../db/entities/job.js';
import { readEvents } from '../../jobs/events.js';
import { failureType, JOB_STOPPED } from '../../jobs/contract.js';
import type { Json } from '../support/http.js';
import { enqueue, recipeCaption, startRecipeHarness, waitForItem, type RecipeHarness } from '../support/recipes.js';

/**
 * Fault: a retry issued while the previous run is still finishing. Whatever the previous run still does (a late
 * attempt of one of its activities, on some worker) changes nothing: the job belongs to the new run
 * (jobs/ownership.ts). The late writes are made by the real activities, with the previous run's id.
 */
let h: RecipeHarness;
beforeAll(async () => {
  h = await startRecipeHarness();
});
afterAll(() => h?.stop());

const stoppedType = (p: Promise<unknown>) => p.then(() => 'resolved', (err: unknown) => failureType(err) ?? String(err));

describe('a retry racing the previous run', () => {
  it("ignores the previous run's late writes, and the new run finishes as if they never happened", async () => {
    const url = h.site.add('race', { title: 'Race dish', caption: recipeCaption('Race dish') });
    h.llm.script.push({ kind: 'not-recipe' }); // the first run ends `error`
    const { body } = await enqueue(h.url, url);
    expect((await waitForItem(h.url, body.id)).status).toBe('error');
    const em = () => h.stack.orm.em.fork();
    const previous = await em().findOneOrFail(Job, { id: body.id });

    h.llm.delayMs = 1500; // the new run is parsing while the late writes arrive
    const retry = await fetch(`${h.url}/api/queue/${body.id}/retry`, { method: 'POST' });
    expect(retry.status).toBe(200);
    await waitForItem(h.url, body.id, (i: Json) => i.phases.find((p: Json) => p.name === 'parsing')?.status === 'in_progress');
    const current = await em().findOneOrFail(Job, { id: body.id });
    expect(current.runId).toBeTruthy();
    expect(current.runId).not.toBe(previous.runId);
    const seenSeq = (await readEvents(em(), `job:${body.id}`, 0)).at(-1)!.seq;

    const deps: ActivityDeps = { config: h.stack.config, orm: h.stack.orm, jobs: h.stack.jobs, log: createLogger('silent'), temporal: h.stack.temporal };
    const jobs = createJobActivities(deps);
    const recipes = createRecipeActivities(deps);
    const late = { jobId: body.id, runId: previous.runId! };
    const step = { itemId: body.id, runId: previous.runId!, timeoutMs: 3000 };
    expect(await stoppedType(jobs.startJob(late))).toBe(JOB_STOPPED);
    await jobs.reportProgress({ ...late, progress: 99, stage: 'late' });
    await jobs.finishJob({ ...late, outcome: 'failed', error: 'a late failure' });
    const activity = new MockActivityEnvironment();
    expect(await stoppedType(activity.run(recipes.recipeExtract, step))).toBe(JOB_STOPPED);
    expect(await stoppedType(activity.run(recipes.recipeUpload, step))).toBe(JOB_STOPPED);
    expect(await activity.run(recipes.recipeFail, { ...step, status: 'unhealthy' as const, error: 'a late give-up' })).toBeNull();

    // Nothing of theirs is there: the job is the new run's, and none of its events came from them.
    expect(await em().findOneOrFail(Job, { id: body.id })).toMatchObject({ runId: current.runId, status: 'in_progress', error: null, completedAt: null });
    for (const e of await readEvents(em(), `job:${body.id}`, seenSeq)) {
      expect(e.data).not.toMatchObject({ status: 'unhealthy' });
      expect(JSON.stringify(e.data)).not.toMatch(/late/);
    }

    h.llm.delayMs = 0;
    const done = await waitForItem(h.url, body.id);
    expect(done).toMatchObject({ status: 'success', runs: 2 });
    expect(done.phases.map((p: Json) => [p.name, p.status])).toEqual([
      ['extraction', 'completed'],
      ['parsing', 'completed'],
      ['uploading', 'completed'],
    ]);
    expect(h.manager.created).toHaveLength(1);
  });
});
