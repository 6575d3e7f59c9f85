import { WorkflowNotFoundError } from '@temporalio/client';
import { getConcurrency } from '../docindex/settings.js';
import { requestSlot, type SlotPool, updateSlotLimit } from '../jobs/slots.js';
import type { SlotRequest } from '../workflows/slots.js';
import type { ActivityDeps } from './deps.js';

/** Where each pool's limit comes from. */
function limitOf(deps: Pick<ActivityDeps, 'orm' | 'config'>, pool: string): Promise<number> {
  switch (pool) {
    case 'indexing':
      return getConcurrency(deps.orm.em, deps.config.cpuCount);
    case 'recipes':
      // QUEUE_PROCESSING_ENABLED=false: no slots, so items are accepted and wait `pending`.
      return Promise.resolve(deps.config.recipes.processingEnabled ? deps.config.recipes.concurrency : 0);
    default:
      throw new Error(`unknown concurrency pool "${pool}"`);
  }
}

/** Pools whose limit comes from the environment rather than a setting changed through the API. */
const CONFIGURED_POOLS: SlotPool[] = ['recipes'];

/**
 * When a worker of a pool's queue starts, the pool takes the limit this process is configured with at once (a
 * restart with another QUEUE_CONCURRENCY or QUEUE_PROCESSING_ENABLED applies to items already waiting). A pool
 * that is not running reads its limit when it starts; nothing is started here.
 */
export async function applyConfiguredSlotLimits(deps: Pick<ActivityDeps, 'orm' | 'config' | 'temporal' | 'log'>, queues: readonly string[]): Promise<void> {
  for (const pool of CONFIGURED_POOLS.filter((p) => queues.includes(p))) {
    const limit = await limitOf(deps, pool);
    try {
      await updateSlotLimit(deps.temporal, deps.config, pool, limit);
    } catch (err) {
      deps.log.warn('could not apply the concurrency limit to its pool', { pool, limit, error: (err as Error).message });
    }
  }
}

export function createSlotActivities(deps: ActivityDeps) {
  return {
    async requestSlot({ pool, request }: { pool: string; request: SlotRequest }): Promise<string> {
      return requestSlot(deps.temporal, deps.config, pool as SlotPool, request);
    },

    async slotLimit(pool: string): Promise<number> {
      return limitOf(deps, pool);
    },

    /** Which of these workflows are still running. */
    async liveWorkflows(workflowIds: string[]): Promise<string[]> {
      const live: string[] = [];
      for (const id of new Set(workflowIds)) {
        try {
          const d = await deps.temporal.workflow.getHandle(id).describe();
          if (d.status.name === 'RUNNING') live.push(id);
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) live.push(id); // unsure: keep it
        }
      }
      return live;
    },
  };
}
export type SlotActivities = ReturnType<typeof createSlotActivities>;
