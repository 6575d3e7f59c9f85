import {
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { SlotActivities } from '../activities/slots.js';
import { JOB_ACTIVITY_RETRY } from './retry-policy.js';

/**
 * A concurrency pool as a workflow (Temporal's mutex pattern, with n permits): job workflows ask for a slot, wait
 * until granted, and give it back when they end. The limit can change while it runs (the indexing concurrency
 * setting), waiting jobs survive restarts because they are workflows, and the queue is visible in the Temporal
 * UI through the `state` query. Slots of holders that died without releasing are reclaimed.
 */
export interface SlotRequest {
  requestId: string;
  workflowId: string;
}
export interface SlotsState {
  pool: string;
  /** 0 until read from the pool's setting. */
  limit: number;
  holders: SlotRequest[];
  waiting: SlotRequest[];
}

export const acquireSlotSignal = defineSignal<[SlotRequest]>('acquireSlot');
export const releaseSlotSignal = defineSignal<[string]>('releaseSlot');
export const setSlotLimitSignal = defineSignal<[number]>('setSlotLimit');
export const slotGrantedSignal = defineSignal<[string]>('slotGranted');
export const slotsStateQuery = defineQuery<SlotsState>('state');

const activities = proxyActivities<SlotActivities>({ startToCloseTimeout: '30 seconds', retry: JOB_ACTIVITY_RETRY });

export async function slotsWorkflow(state: SlotsState): Promise<void> {
  const has = (list: SlotRequest[], id: string) => list.some((r) => r.requestId === id);
  let dirty = true;
  setHandler(acquireSlotSignal, (r) => {
    if (!has(state.holders, r.requestId) && !has(state.waiting, r.requestId)) state.waiting.push(r);
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

  if (state.limit <= 0) state.limit = await activities.slotLimit(state.pool);

  for (;;) {
    dirty = false;
    while (state.holders.length < state.limit && state.waiting.length) {
      const next = state.waiting.shift()!;
      state.holders.push(next);
      try {
        await getExternalWorkflowHandle(next.workflowId).signal(slotGrantedSignal, next.requestId);
      } catch {
        state.holders = state.holders.filter((r) => r !== next); // the requester is gone
      }
    }
    const woke = await condition(() => dirty, '30 seconds');
    if (!woke && (state.holders.length || state.waiting.length)) {
      // Reclaim slots of workflows that ended without releasing (e.g. terminated by an operator).
      const live = new Set(await activities.liveWorkflows([...state.holders, ...state.waiting].map((r) => r.workflowId)));
      state.holders = state.holders.filter((r) => live.has(r.workflowId));
      state.waiting = state.waiting.filter((r) => live.has(r.workflowId));
    }
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 5000) {
      await continueAsNew<typeof slotsWorkflow>(state);
    }
  }
}

/** Runs `fn` holding a slot of `pool`; waits (cancellably) for one first, and always gives it back. */
export async function withSlot<T>(pool: string, fn: () => Promise<T>): Promise<T> {
  const { workflowId, runId } = workflowInfo();
  const requestId = `${workflowId}/${runId}`;
  let granted = false;
  setHandler(slotGrantedSignal, (id) => {
    if (id === requestId) granted = true;
  });
  const slotsWorkflowId = await activities.requestSlot({ pool, request: { requestId, workflowId } });
  try {
    await condition(() => granted);
    return await fn();
  } finally {
    await CancellationScope.nonCancellable(async () => {
      await getExternalWorkflowHandle(slotsWorkflowId)
        .signal(releaseSlotSignal, requestId)
        .catch(() => undefined); // the pool workflow is gone: nothing to give back
    });
  }
}
