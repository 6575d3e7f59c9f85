import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';

const WORKFLOWS = fileURLToPath(new URL('../fixtures/eager-workflows.ts', import.meta.url));

/**
 * Runs a workflow of `steps` sequential activities on a fresh task queue served by two workers: the one that runs
 * the workflow (and activities), and another with activities only. Returns which of them ran each step. With eager
 * activity dispatch every step comes back to the first with its workflow task's completion; through the queue, the
 * other takes about half. The other worker has a connection of its own: one connection may not hold two workers
 * that serve activities on one queue.
 */
export async function activityWorkers(address: string, steps: number): Promise<string[]> {
  const connections = await Promise.all([NativeConnection.connect({ address }), NativeConnection.connect({ address })]);
  const client = await Connection.connect({ address });
  try {
    const taskQueue = `eager-${randomUUID()}`;
    const scheduling = await Worker.create({
      connection: connections[0],
      taskQueue,
      workflowsPath: WORKFLOWS,
      activities: { whichWorker: async () => 'the scheduling worker' },
    });
    const other = await Worker.create({ connection: connections[1], taskQueue, activities: { whichWorker: async () => 'another worker' } });
    const run = new Client({ connection: client }).workflow.execute('sequentialActivitiesWorkflow', { taskQueue, workflowId: taskQueue, args: [steps] });
    return await scheduling.runUntil(other.runUntil(run));
  } finally {
    await client.close();
    await Promise.all(connections.map((c) => c.close()));
  }
}
