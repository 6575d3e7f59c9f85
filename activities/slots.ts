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

/** The job kind whose workflows take slots of each pool (they take one before their job starts running). */
const KIND_OF: Record<SlotPool, string> = { indexing: 'index', recipes: 'recipe' };

/** Pools whose limit comes from the environment rather than a setting changed through the API. */
const CONFIGURED_POOLS: SlotPool[] = ['recipes'];

/** Liveness checks at once: a pool's holders are few (its limit), but a shrunk limit or a slow server stays bounded. */
const DESCRIBES_AT_ONCE = 16;

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

/** The concurrency pools' activities (workflows/slots.ts). */
export function createSlotActivities(deps: ActivityDeps) {
  return {
    async requestSlot({ pool, request, poolRunId }: { pool: string; request: SlotRequest; poolRunId?: string }) {
      return requestSlot(deps.temporal, deps.config, pool as SlotPool, request, poolRunId);
    },

    async slotSettings(pool: string): Promise<{ limit: number; checkMs: number }> {
      return { limit: await limitOf(deps, pool), checkMs: deps.config.slotCheckIntervalMs };
    },

    /** The runs PostgreSQL says hold a slot of `pool`: their jobs have started and not finished. */
    async slotHolders(pool: string): Promise<SlotRequest[]> {
      const kind = KIND_OF[pool as SlotPool];
      if (!kind) throw new Error(`unknown concurrency pool "${pool}"`);
      const rows: { workflow_id: string; run_id: string }[] = await deps.orm.em
        .fork()
        .execute('select workflow_id, run_id from job where kind = ? and completed_at is null and started_at is not null and run_id is not null', [kind]);
      return rows.map((r) => ({ requestId: `${r.workflow_id}/${r.run_id}`, workflowId: r.workflow_id, runId: r.run_id }));
    },

    /** Which of these requests' runs are still running, asked of Temporal by run, a bounded number at a time. */
    async liveSlotRequests(requests: SlotRequest[]): Promise<string[]> {
      const live: string[] = [];
      for (let i = 0; i < requests.length; i += DESCRIBES_AT_ONCE) {
        await Promise.all(
          requests.slice(i, i + DESCRIBES_AT_ONCE).map(async (r) => {
            try {
              const d = await deps.temporal.workflow.getHandle(r.workflowId, r.runId).describe();
              if (d.status.name === 'RUNNING') live.push(r.requestId);
            } catch (err) {
              if (!(err instanceof WorkflowNotFoundError)) live.push(r.requestId); // unsure: keep it
            }
          }),
        );
      }
      return live;
    },
  };
}
export type SlotActivities = ReturnType<typeof createSlotActivities>;
