import { describe, expect, it } from 'vitest';
import type { SlotRequest, SlotsState } from '../../jobs/slot-contract.js';
import { SlotSemaphore } from '../../workflows/slot-pool.js';

const req = (id: string): SlotRequest => ({ requestId: `wf-${id}/run-${id}`, workflowId: `wf-${id}`, runId: `run-${id}` });
const ids = (list: readonly SlotRequest[]) => list.map((r) => r.requestId);
const pool = (over: Partial<SlotsState> = {}) => new SlotSemaphore({ pool: 'recipes', limit: 2, holders: [], waiting: [], adopted: true, checkMs: 1000, ...over });

describe('SlotSemaphore', () => {
  it('grants in queue order up to the limit, and the rest wait', () => {
    const p = pool();
    for (const id of ['a', 'b', 'c']) p.acquire(req(id));
    expect(ids(p.grantNext())).toEqual([req('a').requestId, req('b').requestId]);
    expect(ids(p.holders)).toEqual([req('a').requestId, req('b').requestId]);
    expect(ids(p.waiting)).toEqual([req('c').requestId]);
    expect(p.grantNext()).toEqual([]);
  });

  it('a release frees a slot for the next in the queue, and withdraws a waiting request', () => {
    const p = pool({ limit: 1 });
    for (const id of ['a', 'b', 'c']) p.acquire(req(id));
    p.grantNext();
    p.release(req('c').requestId);
    p.release(req('a').requestId);
    expect(ids(p.grantNext())).toEqual([req('b').requestId]);
    expect(p.waiting).toEqual([]);
  });

  it('a request that asks again is queued once; a holder that asks again is granted again, once', () => {
    const p = pool({ limit: 1 });
    p.acquire(req('a'));
    p.acquire(req('b'));
    p.acquire(req('b'));
    expect(ids(p.waiting)).toEqual([req('a').requestId, req('b').requestId]);
    p.grantNext();
    p.acquire(req('a'));
    p.acquire(req('a'));
    expect(ids(p.takeRegrants())).toEqual([req('a').requestId]);
    expect(p.takeRegrants()).toEqual([]);
    expect(ids(p.holders)).toEqual([req('a').requestId]);
  });

  it('a holder that asked again and left meanwhile is not granted again', () => {
    const p = pool({ holders: [req('a')] });
    p.acquire(req('a'));
    p.release(req('a').requestId);
    expect(p.takeRegrants()).toEqual([]);
  });

  it('a grown limit grants more; a shrunk one takes nothing back, and grants none until holders are fewer', () => {
    const p = pool({ limit: 1 });
    for (const id of ['a', 'b', 'c', 'd']) p.acquire(req(id));
    p.grantNext();
    p.setLimit(3);
    expect(ids(p.grantNext())).toEqual([req('b').requestId, req('c').requestId]);
    p.setLimit(1);
    p.release(req('a').requestId);
    expect(p.grantNext()).toEqual([]);
    expect(p.holders).toHaveLength(2);
    p.release(req('b').requestId);
    p.release(req('c').requestId);
    expect(ids(p.grantNext())).toEqual([req('d').requestId]);
  });

  it('a grant that could not be delivered frees its slot', () => {
    const p = pool({ limit: 1 });
    p.acquire(req('a'));
    p.acquire(req('b'));
    p.grantNext();
    p.lost(req('a').requestId);
    expect(ids(p.grantNext())).toEqual([req('b').requestId]);
  });

  it('reclaims the slots of holders whose runs have ended', () => {
    const p = pool({ holders: [req('a'), req('b')], waiting: [req('c')] });
    p.reclaim([req('b').requestId]);
    expect(ids(p.holders)).toEqual([req('b').requestId]);
    expect(ids(p.grantNext())).toEqual([req('c').requestId]);
  });

  it('adopts the running jobs as holders, out of the queue, each once', () => {
    const p = pool({ adopted: false, holders: [req('a')], waiting: [req('b'), req('c')] });
    expect(p.adopted).toBe(false);
    p.adopt([req('a'), req('b')]);
    expect(p.adopted).toBe(true);
    expect(ids(p.holders)).toEqual([req('a').requestId, req('b').requestId]);
    expect(ids(p.waiting)).toEqual([req('c').requestId]);
  });

  it('reads its settings until it has a check interval; a limit already set is kept', () => {
    const fresh = pool({ limit: 0, checkMs: undefined });
    expect(fresh.needsSettings).toBe(true);
    fresh.configure({ limit: 4, checkMs: 500 });
    expect([fresh.needsSettings, fresh.limit, fresh.checkMs]).toEqual([false, 4, 500]);

    const signalled = pool({ limit: 0, checkMs: undefined });
    signalled.setLimit(3);
    expect(signalled.needsSettings).toBe(true);
    signalled.configure({ limit: 4, checkMs: 500 });
    expect(signalled.limit).toBe(3);
    // No slots (QUEUE_PROCESSING_ENABLED=false): a pool that continues as new reads them again.
    expect(pool({ limit: 0 }).needsSettings).toBe(true);
  });

  it('counts every signal and lost grant, so the workflow wakes even when nothing changed', () => {
    const p = pool();
    p.acquire(req('a'));
    const seen = p.version;
    p.acquire(req('a'));
    expect(p.version).not.toBe(seen);
    const next = p.version;
    p.lost('nobody');
    expect(p.version).not.toBe(next);
  });

  it('a snapshot is a copy of the state it was given, as it is now', () => {
    const state: SlotsState = { pool: 'indexing', limit: 1, holders: [], waiting: [], adopted: false, historyLimit: 60 };
    const p = new SlotSemaphore(state);
    p.acquire(req('a'));
    p.acquire(req('b'));
    p.grantNext();
    const snap = p.snapshot();
    expect(snap).toEqual({ pool: 'indexing', limit: 1, holders: [req('a')], waiting: [req('b')], adopted: false, historyLimit: 60 });
    p.release(req('a').requestId);
    expect(snap.holders).toEqual([req('a')]);
    expect([p.checkMs, p.historyLimit, new SlotSemaphore({ ...state, historyLimit: undefined }).historyLimit]).toEqual([30_000, 60, 5000]);
  });
});
