import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { SlotActivities } from '../activities/slots.js';
import type { SlotTicket } from '../jobs/slots.js';
import { JOB_ACTIVITY_RETRY } from './retry-policy.js';

/**
 * A concurrency pool as a workflow (Temporal's mutex pattern, with n permits; docs/jobs.md, "Concurrency pools"):
 * job workflows ask for a slot, wait until granted, and give it back when they end. The limit can change while it
 * runs (the indexing concurrency setting), waiting jobs survive restarts because they are workflows, and the queue
 * is visible in the Temporal UI through the `state` query.
 *
 * Nothing that goes wrong loses a job. An activity that fails (PostgreSQL away, Temporal slow) is caught, backed off
 * and tried again; the pool never fails. Every SLOT_CHECK_INTERVAL_MS, on a timer no signal postpones, it asks
 * Temporal which of its holders' runs still run (by workflow id and run id, a bounded set) and takes back the slots
 * of the others. A pool that is lost anyway (terminated in the Temporal UI) is started again by the next request:
 * it takes over the jobs PostgreSQL says are running as its holders, and every waiting job asks again within
 * SLOT_CHECK_INTERVAL_MS (requests are idempotent by id), so each waiter is back in the queue.
 */
export interface SlotRequest {
  requestId: string;
  workflowId: string;
  /** The requesting run: its slot is taken back once that run has ended, whatever runs later under the same id. */
  runId?: string;
}
export interface SlotsState {
  pool: string;
  /** 0 until read from the pool's setting. */
  limit: number;
  holders: SlotRequest[];
  waiting: SlotRequest[];
  /** The running jobs PostgreSQL knows of were taken on as holders (done once, by the first run of a pool). */
  adopted?: boolean;
  /** SLOT_CHECK_INTERVAL_MS, read from the worker's configuration. */
  checkMs?: number;
  /** History events a run of the pool collects before it continues as new (5000; test/replay records with fewer). */
  historyLimit?: number;
}

export const acquireSlotSignal = defineSignal<[SlotRequest]>('acquireSlot');
export const releaseSlotSignal = defineSignal<[string]>('releaseSlot');
export const setSlotLimitSignal = defineSignal<[number]>('setSlotLimit');
export const slotGrantedSignal = defineSignal<[string]>('slotGranted');
export const slotsStateQuery = defineQuery<SlotsState>('state');

/** The pool catches every failure itself: a few quick tries, then its own backoff (BACKOFF_MS). */
const activities = proxyActivities<SlotActivities>({ startToCloseTimeout: '30 seconds', retry: { ...JOB_ACTIVITY_RETRY, maximumAttempts: 3 } });
const requests = proxyActivities<SlotActivities>({ startToCloseTimeout: '30 seconds', retry: JOB_ACTIVITY_RETRY });
const BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000];

export async function slotsWorkflow(state: SlotsState): Promise<void> {
  const has = (list: SlotRequest[], id: string) => list.some((r) => r.requestId === id);
  let dirty = true;
  /** Holders that asked again: their grant may not have reached them, so it is sent again. */
  const regrant = new Set<string>();
  setHandler(acquireSlotSignal, (r) => {
    if (has(state.holders, r.requestId)) regrant.add(r.requestId);
    else if (!has(state.waiting, r.requestId)) state.waiting.push(r);
    dirty = true;
  });
  setHandler(releaseSlotSignal, (id) => {
    state.holders = state.holders.filter((r) => r.requestId !== id);
    state.waiting = state.waiting.filter((r) => r.requestId !== id);
    dirty = true;
  });
  setHandler(setSlotLimitSignal, (limit) => {
    state.limit = limit;
    dirty = true;
  });
  setHandler(slotsStateQuery, () => state);

  let failures = 0;
  /** Runs a step; a failure is logged in the history as the activity's, backed off, and answered `false`. */
  const attempt = async (step: () => Promise<void>): Promise<boolean> => {
    try {
      await step();
      failures = 0;
      return true;
    } catch {
      await sleep(BACKOFF_MS[Math.min(failures++, BACKOFF_MS.length - 1)]!);
      return false;
    }
  };

  /** Holders whose run has ended (terminated, timed out, failed in a way that skipped its release) leave. */
  const reclaim = () =>
    attempt(async () => {
      if (!state.holders.length) return;
      const live = new Set(await activities.liveSlotRequests(state.holders));
      state.holders = state.holders.filter((r) => live.has(r.requestId));
      dirty = true;
    });

  // The reclaim timer runs on its own: a steady stream of signals never postpones it.
  let checkDue = false;
  const armCheck = () => {
    void sleep(state.checkMs ?? 30_000).then(() => {
      checkDue = true;
    });
  };

  while (state.limit <= 0 || !state.checkMs) {
    const read = await attempt(async () => {
      const settings = await activities.slotSettings(state.pool);
      if (state.limit <= 0) state.limit = settings.limit;
      state.checkMs = settings.checkMs;
    });
    if (read) break;
  }
  while (!state.adopted) {
    // A pool started afresh (the first, or one after its predecessor was lost): the running jobs hold slots.
    await attempt(async () => {
      for (const r of await activities.slotHolders(state.pool)) {
        state.waiting = state.waiting.filter((w) => w.requestId !== r.requestId);
        if (!has(state.holders, r.requestId)) state.holders.push(r);
      }
      state.adopted = true;
    });
    if (state.adopted) await reclaim(); // some of them may have died with the old pool
  }
  armCheck();

  for (;;) {
    dirty = false;
    const grants: Promise<void>[] = [];
    while (state.holders.length < state.limit && state.waiting.length) {
      const next = state.waiting.shift()!;
      state.holders.push(next);
      grants.push(grant(next).catch(() => {
        state.holders = state.holders.filter((r) => r !== next); // that run has ended
        dirty = true;
      }));
    }
    for (const id of regrant) {
      const holder = state.holders.find((r) => r.requestId === id);
      if (holder) grants.push(grant(holder).catch(() => undefined));
    }
    regrant.clear();
    await Promise.all(grants);

    await condition(() => dirty || checkDue);
    if (checkDue) {
      checkDue = false;
      await reclaim();
      armCheck();
    }
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > (state.historyLimit ?? 5000)) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof slotsWorkflow>(state);
    }
  }
}

/** The grant goes to the requesting run itself, never to a later run under the same workflow id. */
function grant(r: SlotRequest): Promise<void> {
  return getExternalWorkflowHandle(r.workflowId, r.runId).signal(slotGrantedSignal, r.requestId);
}

/**
 * Runs `fn` holding a slot of `pool`; waits (cancellably) for one first, and always gives it back. While it waits it
 * checks every SLOT_CHECK_INTERVAL_MS that the pool run which took its request still runs, and asks again if not.
 */
export async function withSlot<T>(pool: string, fn: () => Promise<T>): Promise<T> {
  const { workflowId, runId } = workflowInfo();
  const request: SlotRequest = { requestId: `${workflowId}/${runId}`, workflowId, runId };
  let granted = false;
  setHandler(slotGrantedSignal, (id) => {
    if (id === request.requestId) granted = true;
  });
  let ticket: SlotTicket = await requests.requestSlot({ pool, request });
  try {
    while (!(await condition(() => granted, ticket.checkMs))) {
      try {
        ticket = await requests.requestSlot({ pool, request, poolRunId: ticket.runId });
      } catch {
        // Temporal itself is unreachable for now: keep waiting, ask again next time.
      }
    }
    return await fn();
  } finally {
    const poolId = ticket.workflowId;
    await CancellationScope.nonCancellable(async () => {
      await getExternalWorkflowHandle(poolId)
        .signal(releaseSlotSignal, request.requestId)
        .catch(() => undefined); // the pool workflow is gone: nothing to give back (its successor never had it)
    });
  }
}
