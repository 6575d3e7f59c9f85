import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { type Config, type QueueName, taskQueue } from '../core/config.js';
import {
  acquireSlotSignal,
  releaseSlotSignal,
  setSlotLimitSignal,
  type SlotRequest,
  type SlotsState,
  slotsStateQuery,
  type SlotTicket,
  SLOTS_WORKFLOW,
  type SlotsWorkflow,
} from './slot-contract.js';

/** Concurrency pools are named after the task queue whose jobs they limit. */
export type SlotPool = QueueName;

export function slotsWorkflowId(config: Pick<Config, 'taskQueuePrefix'>, pool: SlotPool): string {
  return `slots:${config.taskQueuePrefix}${pool}`;
}

function start(config: Config, pool: SlotPool) {
  const initial: SlotsState = { pool, limit: 0, holders: [], waiting: [], adopted: false };
  return {
    taskQueue: taskQueue(config, pool),
    workflowId: slotsWorkflowId(config, pool),
    args: [initial] as [SlotsState],
  };
}

/**
 * Asks the pool for a slot, starting the pool's workflow if it is not running. With the `runId` of an earlier
 * ticket, it asks only if that run is no longer the pool's running one (terminated, failed, or continued as new):
 * requests are idempotent, but a pool with thousands of waiters need not hear from each of them every interval.
 */
export async function requestSlot(client: Client, config: Config, pool: SlotPool, request: SlotRequest, runId?: string): Promise<SlotTicket> {
  const s = start(config, pool);
  const ticket = (r: string): SlotTicket => ({ workflowId: s.workflowId, runId: r, checkMs: config.slotCheckIntervalMs });
  if (runId && (await runningRun(client, s.workflowId)) === runId) return ticket(runId);
  const handle = await client.workflow.signalWithStart<SlotsWorkflow, [SlotRequest]>(SLOTS_WORKFLOW, {
    ...s,
    signal: acquireSlotSignal,
    signalArgs: [request],
  });
  return ticket(handle.signaledRunId);
}

/** The run of the pool's workflow that is running; undefined when none is. */
async function runningRun(client: Client, workflowId: string): Promise<string | undefined> {
  try {
    const d = await client.workflow.getHandle(workflowId).describe();
    return d.status.name === 'RUNNING' ? d.runId : undefined;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/** Applies a new limit at once: waiting jobs start if it grew; running ones finish if it shrank. */
export async function setSlotLimit(client: Client, config: Config, pool: SlotPool, limit: number): Promise<void> {
  await client.workflow.signalWithStart<SlotsWorkflow, [number]>(SLOTS_WORKFLOW, {
    ...start(config, pool),
    signal: setSlotLimitSignal,
    signalArgs: [limit],
  });
}

/** Applies a new limit to a running pool; a pool that is not running is left alone (it reads its limit at start). */
export async function updateSlotLimit(client: Client, config: Config, pool: SlotPool, limit: number): Promise<boolean> {
  try {
    await client.workflow.getHandle(slotsWorkflowId(config, pool)).signal(setSlotLimitSignal, limit);
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/**
 * Gives back the slot a run of `workflowId` asked for (its request id is `<workflowId>/<runId>`), on its behalf:
 * for a run that is about to be replaced (a retry terminates it) before it released the slot itself. Harmless when
 * it had already; nothing happens when the pool is not running.
 */
export async function releaseSlotOf(client: Client, config: Config, pool: SlotPool, workflowId: string, runId: string): Promise<void> {
  try {
    await client.workflow.getHandle(slotsWorkflowId(config, pool)).signal(releaseSlotSignal, `${workflowId}/${runId}`);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

/** The pool's holders and queue, as its workflow sees them (for tests and operators). */
export async function slotsState(client: Client, config: Config, pool: SlotPool): Promise<SlotsState | undefined> {
  try {
    return await client.workflow.getHandle(slotsWorkflowId(config, pool)).query(slotsStateQuery);
  } catch {
    return undefined;
  }
}
