import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slotsState } from '../../jobs/slots.js';
import type { Json } from '../support/http.js';
import { enqueue, recipeCaption, startRecipeHarness, storedUpdates, waitForItem, type RecipeHarness } from '../support/recipes.js';

/** QUEUE_CONCURRENCY under load: the pool's cap holds, judged from what was recorded, not from timing. */
let h: RecipeHarness;
beforeAll(async () => {
  h = await startRecipeHarness({ env: { QUEUE_CONCURRENCY: '2' } });
});
afterAll(() => h?.stop());

describe('QUEUE_CONCURRENCY=2', () => {
  it('runs six items with never more than two in progress, and finishes them all', async () => {
    h.llm.delayMs = 300;
    const urls = Array.from({ length: 6 }, (_, i) => h.site.add(`load-${i}`, { title: `Dish ${i}`, caption: recipeCaption(`Dish ${i}`) }));
    const created = await Promise.all(urls.map((u) => enqueue(h.url, u)));
    expect(created.every((c) => c.status === 201 && c.body.status === 'pending')).toBe(true);
    const ids = created.map((c) => c.body.id as string);
    const items = await Promise.all(ids.map((id) => waitForItem(h.url, id, undefined, 60_000)));
    expect(items.every((i) => i.status === 'success')).toBe(true);

    // Replay the queue's own record: every status change of every item, in the order they were committed.
    const status = new Map<string, string>();
    let most = 0;
    for (const { data } of await storedUpdates(h.stack, 'kind:recipe')) {
      status.set(data.itemId, data.status);
      most = Math.max(most, [...status.values()].filter((s) => s === 'in_progress').length);
    }
    expect(most).toBe(2);
    // Items started in turn: each one's in_progress comes after an earlier one's success once two were running.
    const starts = (await storedUpdates(h.stack, 'kind:recipe')).filter((u: Json) => u.data.status === 'in_progress' && u.data.progress.every((p: Json) => p.status === 'pending'));
    expect(starts).toHaveLength(6);
    // The model never had more than two questions at once either (whether two overlapped at all is timing).
    expect(h.llm.maxInFlight).toBeGreaterThanOrEqual(1);
    expect(h.llm.maxInFlight).toBeLessThanOrEqual(2);
    const pool = await slotsState(h.stack.temporal, h.stack.config, 'recipes');
    expect(pool).toMatchObject({ limit: 2, waiting: [] });
    await expect.poll(async () => (await slotsState(h.stack.temporal, h.stack.config, 'recipes'))?.holders.length).toBe(0);
  });
});
