import { randomBytes } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleOption } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivityDeps } from '../../activities/deps.js';
import { createSlotActivities } from '../../activities/slots.js';
import { taskQueue } from '../../core/config.js';
import { loadConfig } from '../../runtime/config.js';
import { setSlotLimit, slotsState, slotsWorkflowId } from '../../jobs/slots.js';
import type { SlotRequest } from '../../jobs/slot-contract.js';
import { recipesPool } from '../../recipes/pool.js';
import { releaseHolderSignal, type slotHolderWorkflow } from '../fixtures/workflows.js';
import { createTimeSkippingEnv, testWorkflowBundle, withWorker } from '../support/time-skipping.js';
import { until } from '../support/until.js';

/**
 * The concurrency pool (workflows/slots.ts) on Temporal's time-skipping test server, with holders that keep their
 * slot until signalled (test/fixtures/workflows.ts). Its activities are the real ones (they only talk to Temporal),
 * except the one that reads PostgreSQL: no running jobs to adopt.
 */
const CHECK_MS = 10 * 60_000;
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundleOption;
beforeAll(async () => {
  [env, bundle] = await Promise.all([createTimeSkippingEnv(), testWorkflowBundle()]);
});
afterAll(() => env?.teardown());

describe('concurrency pool (time-skipping)', () => {
  it('grants in order up to the limit, grants more when the limit grows, and reclaims a dead holder on its check timer', async () => {
    const config = loadConfig({ TASK_QUEUE_PREFIX: `ts${randomBytes(3).toString('hex')}-`, QUEUE_CONCURRENCY: '2', SLOT_CHECK_INTERVAL_MS: String(CHECK_MS) });
    const queue = taskQueue(config, 'recipes');
    const activities = { ...createSlotActivities({ config, temporal: env.client } as ActivityDeps, [recipesPool]), slotHolders: async (): Promise<SlotRequest[]> => [] };

    const names = (list: SlotRequest[]) => list.map((r) => r.workflowId);
    const state = () => slotsState(env.client, config, 'recipes');
    const poolShows = (holders: string[], waiting: string[]) =>
      until(state, (s) => JSON.stringify([names(s?.holders ?? []), names(s?.waiting ?? [])]) === JSON.stringify([holders, waiting]), {
        what: `holders ${holders.join(',')} and waiting ${waiting.join(',') || 'none'}`,
      });
    /** Starts a holder once the pool has the one before it: the pool's queue is in the order of the requests. */
    const holder = async (name: string) => {
      const handle = await env.client.workflow.start<typeof slotHolderWorkflow>('slotHolderWorkflow', { taskQueue: queue, workflowId: name, args: ['recipes'] });
      await until(state, (s) => [...(s?.holders ?? []), ...(s?.waiting ?? [])].some((r) => r.workflowId === name), { what: `${name} in the pool` });
      return handle;
    };

    await withWorker(env, { taskQueue: queue, bundle, activities }, async () => {
      const a = await holder('a');
      const b = await holder('b');
      const c = await holder('c');
      await holder('d');
      await poolShows(['a', 'b'], ['c', 'd']);

      // a's holder got its grant (it is running its part) and gives the slot back: the next in line gets it.
      await a.signal(releaseHolderSignal);
      await a.result();
      await poolShows(['b', 'c'], ['d']);

      await setSlotLimit(env.client, config, 'recipes', 3);
      await poolShows(['b', 'c', 'd'], []);

      // c's run ends without giving its slot back: only the pool's check timer notices.
      await holder('e');
      await c.terminate('test: a holder dies');
      await new Promise((r) => setTimeout(r, 500));
      expect(names((await state())!.holders)).toEqual(['b', 'c', 'd']);
      await env.sleep(CHECK_MS);
      await poolShows(['b', 'd', 'e'], []);
      expect(await b.describe()).toMatchObject({ status: { name: 'RUNNING' } });

      await env.client.workflow.getHandle(slotsWorkflowId(config, 'recipes')).terminate('test over');
    });
  });

  it("takes a holder's last step in the workflow task that gives its slot back, not in the one after", async () => {
    const config = loadConfig({ TASK_QUEUE_PREFIX: `ts${randomBytes(3).toString('hex')}-`, QUEUE_CONCURRENCY: '1', SLOT_CHECK_INTERVAL_MS: String(CHECK_MS) });
    const queue = taskQueue(config, 'recipes');
    const activities = { ...createSlotActivities({ config, temporal: env.client } as ActivityDeps, [recipesPool]), slotHolders: async (): Promise<SlotRequest[]> => [] };
    await withWorker(env, { taskQueue: queue, bundle, activities }, async () => {
      const holder = await env.client.workflow.start<typeof slotHolderWorkflow>('slotHolderWorkflow', { taskQueue: queue, workflowId: 'last', args: ['recipes', true] });
      await until(() => slotsState(env.client, config, 'recipes'), (s) => (s?.holders ?? []).some((r) => r.workflowId === 'last'), { what: 'the holder holding its slot' });
      await holder.signal(releaseHolderSignal);
      await holder.result();
      const events = (await holder.fetchHistory()).events!;
      const at = (found: (e: (typeof events)[number]) => unknown) => events.findIndex(found);
      const releaseSent = at((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes);
      const lastScheduled = at((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'liveSlotRequests');
      const releaseTaken = at((e) => e.externalWorkflowExecutionSignaledEventAttributes);
      expect(releaseSent).toBeGreaterThan(0);
      // Both commands of one workflow task (no task began between them): the step did not wait for the pool to
      // have the release.
      expect(lastScheduled).toBeGreaterThan(releaseSent);
      expect(events.slice(releaseSent, lastScheduled).filter((e) => e.workflowTaskStartedEventAttributes)).toEqual([]);
      expect(releaseTaken).toBeGreaterThan(lastScheduled);
      await poolEmpty(config);
      await env.client.workflow.getHandle(slotsWorkflowId(config, 'recipes')).terminate('test over');
    });
  });
});

const poolEmpty = (config: ReturnType<typeof loadConfig>) =>
  until(() => slotsState(env.client, config, 'recipes'), (s) => s?.holders.length === 0, { what: 'the slot given back' });
