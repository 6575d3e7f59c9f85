import { WorkflowNotFoundError } from '@temporalio/client';
import { getConcurrency } from '../docindex/settings.js';
import { requestSlot, type SlotPool } from '../jobs/slots.js';
import type { SlotRequest } from '../workflows/slots.js';
import type { ActivityDeps } from './deps.js';

/** Where each pool's limit comes from. */
function limitOf(deps: ActivityDeps, pool: string): Promise<number> {
  switch (pool) {
    case 'indexing':
      return getConcurrency(deps.orm.em, deps.config.cpuCount);
    default:
      throw new Error(`unknown concurrency pool "${pool}"`);
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
