import type { Client } from '@temporalio/client';
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

/** The pool's holders and queue, as its workflow sees them (for tests and operators). */
export async function slotsState(client: Client, config: Config, pool: SlotPool): Promise<SlotsState | undefined> {
  try {
    return await client.workflow.getHandle(slotsWorkflowId(config, pool)).query<SlotsState>('state');
  } catch {
    return undefined;
  }
}
