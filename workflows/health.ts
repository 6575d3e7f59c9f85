import { proxyActivities } from '@temporalio/workflow';
import type { HealthActivities } from '../activities/health.js';

/**
 * The deep health check: one tiny workflow per task queue whose activity must be picked up by a worker polling
 * that queue. Both its workflow task and its activity run on `taskQueue`, so an answer proves a live worker there.
 */
export async function pingWorkflow(taskQueue: string): Promise<{ taskQueue: string; answeredBy: string }> {
  const { ping } = proxyActivities<HealthActivities>({
    taskQueue,
    startToCloseTimeout: '10 seconds',
    retry: { maximumAttempts: 1 },
  });
  return { taskQueue, answeredBy: await ping() };
}
