import { WorkflowNotFoundError } from '@temporalio/client';
import type { SlotActivities } from '../jobs/slot-contract.js';
import { requestSlot, type SlotPool, updateSlotLimit } from '../jobs/slots.js';
import type { ActivityDeps } from './deps.js';

type LimitDeps = Pick<ActivityDeps, 'orm' | 'config'>;

/** A concurrency pool, as the service whose jobs it limits declares it (docindex/pool.ts, recipes/pool.ts). */
export interface SlotPoolSpec {
  /** Named after the task queue whose jobs it limits. */
  pool: SlotPool;
  /** The job kind whose workflows take its slots (they take one before their job starts running). */
  kind: string;
  /** Where its limit comes from. */
  limit: (deps: LimitDeps) => Promise<number>;
  /** The limit comes from the environment, not from a setting changed through the API. */
  configured: boolean;
}

function specOf(pools: readonly SlotPoolSpec[], pool: string): SlotPoolSpec {
  const spec = pools.find((p) => p.pool === pool);
  if (!spec) throw new Error(`unknown concurrency pool "${pool}"`);
  return spec;
}

/** Liveness checks at once: a pool's holders are few (its limit), but a shrunk limit or a slow server stays bounded. */
const DESCRIBES_AT_ONCE = 16;

/**
 * When a worker of a pool's queue starts, the pool takes the limit this process is configured with at once (a
 * restart with another QUEUE_CONCURRENCY or QUEUE_PROCESSING_ENABLED applies to items already waiting). A pool
 * that is not running reads its limit when it starts; nothing is started here.
 */
export async function applyConfiguredSlotLimits(
  deps: Pick<ActivityDeps, 'orm' | 'config' | 'temporal' | 'log'>,
  queues: readonly string[],
  pools: readonly SlotPoolSpec[],
): Promise<void> {
  for (const { pool, limit: limitOf } of pools.filter((p) => p.configured && queues.includes(p.pool))) {
    const limit = await limitOf(deps);
    try {
      await updateSlotLimit(deps.temporal, deps.config, pool, limit);
    } catch (err) {
      deps.log.warn('could not apply the concurrency limit to its pool', { pool, limit, error: (err as Error).message });
    }
  }
}

/** The concurrency pools' activities (workflows/slots.ts), for the pools `pools` declare. */
export function createSlotActivities(deps: ActivityDeps, pools: readonly SlotPoolSpec[]): SlotActivities {
  return {
    async requestSlot({ pool, request, poolRunId }) {
      return requestSlot(deps.temporal, deps.config, specOf(pools, pool).pool, request, poolRunId);
    },

    async slotSettings(pool) {
      return { limit: await specOf(pools, pool).limit(deps), checkMs: deps.config.slotCheckIntervalMs };
    },

    async slotHolders(pool) {
      const { kind } = specOf(pools, pool);
      const rows: { workflow_id: string; run_id: string }[] = await deps.orm.em
        .fork()
        .execute('select workflow_id, run_id from job where kind = ? and completed_at is null and started_at is not null and run_id is not null', [kind]);
      return rows.map((r) => ({ requestId: `${r.workflow_id}/${r.run_id}`, workflowId: r.workflow_id, runId: r.run_id }));
    },

    /** Asked of Temporal by run, a bounded number at a time. */
    async liveSlotRequests(requests) {
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
