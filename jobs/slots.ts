import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { type Config, type QueueName, taskQueue } from '../core/config.js';
import type { SlotRequest, SlotsState, slotsWorkflow } from '../workflows/slots.js';

/** Concurrency pools are named after the task queue whose jobs they limit. */
export type SlotPool = Extract<QueueName, 'indexing' | 'recipes'>;

export function slotsWorkflowId(config: Pick<Config, 'taskQueuePrefix'>, pool: SlotPool): string {
  return `slots:${config.taskQueuePrefix}${pool}`;
}

function start(config: Config, pool: SlotPool) {
  const initial: SlotsState = { pool, limit: 0, holders: [], waiting: [] };
  return {
    taskQueue: taskQueue(config, pool),
    workflowId: slotsWorkflowId(config, pool),
    args: [initial] as [SlotsState],
  };
}

/** Asks the pool for a slot, starting the pool's workflow if it is not running yet. */
export async function requestSlot(client: Client, config: Config, pool: SlotPool, request: SlotRequest): Promise<string> {
  const s = start(config, pool);
  await client.workflow.signalWithStart<typeof slotsWorkflow, [SlotRequest]>('slotsWorkflow', {
    ...s,
    signal: 'acquireSlot',
    signalArgs: [request],
  });
  return s.workflowId;
}

/** Applies a new limit at once: waiting jobs start if it grew; running ones finish if it shrank. */
export async function setSlotLimit(client: Client, config: Config, pool: SlotPool, limit: number): Promise<void> {
  await client.workflow.signalWithStart<typeof slotsWorkflow, [number]>('slotsWorkflow', {
    ...start(config, pool),
    signal: 'setSlotLimit',
    signalArgs: [limit],
  });
}

/** Applies a new limit to a running pool; a pool that is not running is left alone (it reads its limit at start). */
export async function updateSlotLimit(client: Client, config: Config, pool: SlotPool, limit: number): Promise<boolean> {
  try {
    await client.workflow.getHandle(slotsWorkflowId(config, pool)).signal<[number]>('setSlotLimit', limit);
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
    await client.workflow.getHandle(slotsWorkflowId(config, pool)).signal<[string]>('releaseSlot', `${workflowId}/${runId}`);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

/** The pool's holders and queue, as its workflow sees them (for tests and operators). */
export async function slotsState(client: Client, config: Config, pool: SlotPool): Promise<SlotsState | undefined> {
  try {
    return await client.workflow.getHandle(slotsWorkflowId(config, pool)).query<SlotsState>('state');
  } catch {
    return undefined;
  }
}
