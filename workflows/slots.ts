import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import {
  acquireSlotSignal,
  releaseSlotSignal,
  setSlotLimitSignal,
  type SlotActivities,
  slotGrantedSignal,
  type SlotRequest,
  type SlotsState,
  slotsStateQuery,
  type SlotTicket,
} from '../jobs/slot-contract.js';
import { JOB_ACTIVITY_RETRY } from './retry-policy.js';
import { SlotSemaphore } from './slot-pool.js';

/** The pool catches every failure itself: a few quick tries, then its own backoff (BACKOFF_MS). */
const activities = proxyActivities<SlotActivities>({ startToCloseTimeout: '30 seconds', retry: { ...JOB_ACTIVITY_RETRY, maximumAttempts: 3 } });
const requests = proxyActivities<SlotActivities>({ startToCloseTimeout: '30 seconds', retry: JOB_ACTIVITY_RETRY });
const BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000];

/**
 * A concurrency pool as a workflow (Temporal's mutex pattern, with n permits; docs/jobs.md, "Concurrency pools"):
 * job workflows ask for a slot, wait until granted, and give it back when they end. The limit can change while it
 * runs (the indexing concurrency setting), waiting jobs survive restarts because they are workflows, and the queue
 * is visible in the Temporal UI through the `state` query. Its holders and queue are a SlotSemaphore
 * (workflows/slot-pool.ts); this wires the signals to it, and runs its activities and grants.
 *
 * Nothing that goes wrong loses a job. An activity that fails (PostgreSQL away, Temporal slow) is caught, backed off
 * and tried again; the pool never fails. Every SLOT_CHECK_INTERVAL_MS, on a timer no signal postpones, it asks
 * Temporal which of its holders' runs still run (by workflow id and run id, a bounded set) and takes back the slots
 * of the others. A pool that is lost anyway (terminated in the Temporal UI) is started again by the next request:
 * it takes over the jobs PostgreSQL says are running as its holders, and every waiting job asks again within
 * SLOT_CHECK_INTERVAL_MS (requests are idempotent by id), so each waiter is back in the queue.
 */
export async function slotsWorkflow(state: SlotsState): Promise<void> {
  const pool = new SlotSemaphore(state);
  setHandler(acquireSlotSignal, (r) => pool.acquire(r));
  setHandler(releaseSlotSignal, (id) => pool.release(id));
  setHandler(setSlotLimitSignal, (limit) => pool.setLimit(limit));
  setHandler(slotsStateQuery, () => pool.snapshot());

  const steps = new Steps();
  await readSettings(pool, steps);
  await adoptRunningJobs(pool, steps);
  let check = checkTimer(pool.checkMs);
  for (;;) {
    const grants = sendGrants(pool);
    const seen = pool.version;
    await grants;
    await condition(() => pool.version !== seen || check.due);
    if (check.due) {
      await reclaim(pool, steps);
      check = checkTimer(pool.checkMs);
    }
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > pool.historyLimit) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof slotsWorkflow>(pool.snapshot());
    }
  }
}

/** Runs the pool's steps; a failed one (its activity's failure is in the history) is backed off and answered `false`. */
class Steps {
  private failures = 0;

  async attempt(step: () => Promise<void>): Promise<boolean> {
    try {
      await step();
      this.failures = 0;
      return true;
    } catch {
      await sleep(BACKOFF_MS[Math.min(this.failures++, BACKOFF_MS.length - 1)]!);
      return false;
    }
  }
}

/** Reads the limit and the check interval, until a read succeeds (unless a signal has set what was missing). */
async function readSettings(pool: SlotSemaphore, steps: Steps): Promise<void> {
  while (pool.needsSettings) {
    if (await steps.attempt(async () => pool.configure(await activities.slotSettings(pool.name)))) return;
  }
}

/** A pool started afresh (the first, or one after its predecessor was lost): the running jobs hold slots. */
async function adoptRunningJobs(pool: SlotSemaphore, steps: Steps): Promise<void> {
  while (!pool.adopted) {
    await steps.attempt(async () => pool.adopt(await activities.slotHolders(pool.name)));
    if (pool.adopted) await reclaim(pool, steps); // some of them may have died with the old pool
  }
}

/** Holders whose run has ended (terminated, timed out, failed in a way that skipped its release) leave. */
function reclaim(pool: SlotSemaphore, steps: Steps): Promise<boolean> {
  return steps.attempt(async () => {
    if (pool.holders.length) pool.reclaim(await activities.liveSlotRequests([...pool.holders]));
  });
}

/** The reclaim check's timer, on its own: a steady stream of signals never postpones it. */
function checkTimer(ms: number): { due: boolean } {
  const timer = { due: false };
  void sleep(ms).then(() => {
    timer.due = true;
  });
  return timer;
}

/**
 * Grants the slots the limit allows, in queue order, then again to the holders that asked again. A grant that
 * cannot be delivered frees its slot: that run has ended.
 */
function sendGrants(pool: SlotSemaphore): Promise<unknown> {
  const granted = pool.grantNext().map((r) => grant(r).catch(() => pool.lost(r.requestId)));
  const regranted = pool.takeRegrants().map((r) => grant(r).catch(() => undefined));
  return Promise.all([...granted, ...regranted]);
}

/** The grant goes to the requesting run itself, never to a later run under the same workflow id. */
function grant(r: SlotRequest): Promise<void> {
  return getExternalWorkflowHandle(r.workflowId, r.runId).signal(slotGrantedSignal, r.requestId);
}

/**
 * Runs `fn` holding a slot of `pool`; waits (cancellably) for one first, and always gives it back. While it waits it
 * checks every SLOT_CHECK_INTERVAL_MS that the pool run which took its request still runs, and asks again if not.
 *
 * `last` names the step to take once `fn` has succeeded (the job's finish), if any: it is scheduled in the same
 * workflow task as the release, not in the one after it, a round trip through Temporal less for every job (about a
 * twentieth of a no-change re-index; bench/README.md, Index). Like the release, a cancellation no longer stops it:
 * the work is done. The step may end before the pool has taken the release; a job that records its own ending inside
 * its slot (the recipe queue's) always did. Histories from before the patch take the step after the release, as they
 * did.
 */
export async function withSlot<T>(pool: string, fn: () => Promise<T>, last?: () => (() => Promise<unknown>) | undefined): Promise<T> {
  const { workflowId, runId } = workflowInfo();
  const request: SlotRequest = { requestId: `${workflowId}/${runId}`, workflowId, runId };
  let granted = false;
  setHandler(slotGrantedSignal, (id) => {
    if (id === request.requestId) granted = true;
  });
  let ticket: SlotTicket = await requests.requestSlot({ pool, request });
  let result: { value: T } | undefined;
  let after: (() => Promise<unknown>) | undefined;
  try {
    while (!(await condition(() => granted, ticket.checkMs))) {
      try {
        ticket = await requests.requestSlot({ pool, request, poolRunId: ticket.runId });
      } catch {
        // Temporal itself is unreachable for now: keep waiting, ask again next time.
      }
    }
    result = { value: await fn() };
    after = last?.();
  } finally {
    const poolId = ticket.workflowId;
    await CancellationScope.nonCancellable(async () => {
      const release = getExternalWorkflowHandle(poolId)
        .signal(releaseSlotSignal, request.requestId)
        .catch(() => undefined); // the pool workflow is gone: nothing to give back (its successor never had it)
      if (after && patched('last-step-beside-slot-release')) {
        const step = after;
        after = undefined;
        await Promise.all([release, step()]);
      } else await release;
    });
  }
  if (after) await after();
  return result.value;
}
