import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskQueue } from '../../core/config.js';
import { setSlotLimit, slotsState, slotsWorkflowId } from '../../jobs/slots.js';
import { releaseHolderSignal } from '../fixtures/workflows.js';
import type { Json } from '../support/http.js';
import { enqueue, recipeCaption, startRecipeHarness, storedUpdates, waitForItem, type RecipeHarness } from '../support/recipes.js';
import { until } from '../support/until.js';

/**
 * Fault: the concurrency pool's workflow is lost (terminated in the Temporal UI) while jobs hold and wait for its
 * slots. Every waiting job still runs, never more than the limit at once; and a slot whose run was terminated is
 * taken back even when a later run of the same workflow id is alive.
 */
let h: RecipeHarness;
beforeAll(async () => {
  h = await startRecipeHarness({ queues: ['recipes', 'indexing'], env: { QUEUE_CONCURRENCY: '2', SLOT_CHECK_INTERVAL_MS: '1000' } });
});
afterAll(() => h?.stop());

const pool = (name: 'recipes' | 'indexing') => slotsState(h.stack.temporal, h.stack.config, name);

describe('the pool workflow terminated with waiters queued', () => {
  it('runs all of them, within the limit', { timeout: 180_000 }, async () => {
    h.llm.delayMs = 700;
    const urls = Array.from({ length: 8 }, (_, i) => h.site.add(`lost-${i}`, { title: `Lost dish ${i}`, caption: recipeCaption(`Lost dish ${i}`) }));
    const ids = (await Promise.all(urls.map((u) => enqueue(h.url, u)))).map((c) => c.body.id as string);
    await until(() => pool('recipes'), (s) => s?.holders.length === 2 && s.waiting.length >= 4, { timeoutMs: 30_000, what: 'a full pool with waiters' });

    const handle = h.stack.temporal.workflow.getHandle(slotsWorkflowId(h.stack.config, 'recipes'));
    await handle.terminate('lost in a test');
    const items = await Promise.all(ids.map((id) => waitForItem(h.url, id, undefined, 90_000)));
    expect(items.map((i) => i.status)).toEqual(ids.map(() => 'success'));

    // The queue's own record: never more than two items in progress at once, before or after the loss.
    const status = new Map<string, string>();
    let most = 0;
    for (const { data } of await storedUpdates(h.stack, 'kind:recipe')) {
      status.set(data.itemId, data.status);
      most = Math.max(most, [...status.values()].filter((s: Json) => s === 'in_progress').length);
    }
    expect(most).toBeLessThanOrEqual(2);
    expect(h.llm.maxInFlight).toBeLessThanOrEqual(2);
    expect(h.manager.created).toHaveLength(8);
    await until(() => pool('recipes'), (s) => s?.holders.length === 0 && s.waiting.length === 0, { what: 'an empty pool' });
  });
});

describe('a slot whose run ended without giving it back', () => {
  it('is taken back by run, although a later run of the same workflow id is alive and asking', { timeout: 60_000 }, async () => {
    await setSlotLimit(h.stack.temporal, h.stack.config, 'indexing', 1);
    const workflowId = `${h.stack.config.taskQueuePrefix}index:/acme/reused`;
    const start = () => h.stack.temporal.workflow.start('slotHolderWorkflow', { taskQueue: taskQueue(h.stack.config, 'indexing'), workflowId, args: ['indexing'] });
    const first = await start();
    await until(() => pool('indexing'), (s) => s?.holders.some((r) => r.requestId === `${workflowId}/${first.firstExecutionRunId}`) ?? false, { what: 'the first run holding the slot' });
    await first.terminate('operator stops it'); // never gives the slot back itself

    const second = await start(); // the same workflow id, alive, waiting for that very slot
    await until(() => pool('indexing'), (s) => s?.holders.some((r) => r.requestId === `${workflowId}/${second.firstExecutionRunId}`) ?? false, {
      timeoutMs: 30_000,
      what: 'the second run granted the slot',
    });
    expect((await pool('indexing'))!.holders).toHaveLength(1);
    await second.signal(releaseHolderSignal);
    await second.result();
  });
});
