import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { slotsState } from '../../jobs/slots.js';
import { startStack, type Stack } from '../../runtime/stack.js';
import { json } from '../support/http.js';
import { enqueue, getItem, recipeCaption, startRecipeHarness, waitForItem, type RecipeHarness } from '../support/recipes.js';
import { PROBE_WORKFLOWS } from '../support/stack.js';

/**
 * QUEUE_PROCESSING_ENABLED=false: items are accepted and wait `pending` (their workflows wait for a slot the pool
 * does not grant). A worker that starts with processing enabled opens the pool, and they run.
 */
let h: RecipeHarness;
let enabled: Stack | undefined;
beforeAll(async () => {
  h = await startRecipeHarness({ env: { QUEUE_PROCESSING_ENABLED: 'false', QUEUE_EXTRACT_WAIT_MS: '300' } });
});
afterAll(async () => {
  await enabled?.stop();
  await h?.stop();
});

describe('QUEUE_PROCESSING_ENABLED=false', () => {
  it('accepts items and keeps them pending until a worker starts with processing enabled', async () => {
    const url = h.site.add('waiting', { title: 'Curry', caption: recipeCaption('Curry') });
    const created = await enqueue(h.url, url);
    expect(created).toMatchObject({ status: 201, body: { status: 'pending' } });
    const id = created.body.id;

    // The item's workflow is queued in the pool, which grants nothing.
    await expect.poll(async () => (await slotsState(h.stack.temporal, h.stack.config, 'recipes'))?.waiting.length, { timeout: 15_000 }).toBe(1);
    const pool = await slotsState(h.stack.temporal, h.stack.config, 'recipes');
    expect(pool).toMatchObject({ limit: 0, holders: [] });
    expect(pool!.waiting[0]!.workflowId).toBe(`${h.stack.config.taskQueuePrefix}recipe:${id}`);

    // The deprecated synchronous endpoint gives up waiting after QUEUE_EXTRACT_WAIT_MS: 202 and where to look.
    const sync = await fetch(`${h.url}/api/extract`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
    expect(sync.status).toBe(202);
    expect(sync.headers.get('location')).toBe(`/api/queue/${id}`);
    expect(await json(sync)).toMatchObject({ id, status: 'pending' });

    const item = await getItem(h.url, id);
    expect(item.status).toBe('pending');
    expect(item.phases.every((p: { status: string }) => p.status === 'pending')).toBe(true);
    expect(h.site.hitsOf('/p/waiting')).toBe(0);
    expect(h.llm.requests).toHaveLength(0);

    // "Restart" the workers with processing enabled: the new worker opens the pool at start.
    await h.stack.workers!.shutdown();
    const config = { ...h.stack.config, recipes: { ...h.stack.config.recipes, processingEnabled: true } };
    enabled = await startStack({ config, log: createLogger('warn', 'test:enabled'), api: false, queues: ['recipes'], services: 'attach', extraWorkflows: [PROBE_WORKFLOWS] });
    const done = await waitForItem(h.url, id);
    expect(done.status).toBe('success');
    expect((await slotsState(h.stack.temporal, h.stack.config, 'recipes'))?.limit).toBe(2);
  });
});
