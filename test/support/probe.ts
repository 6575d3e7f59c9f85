import type { Context } from 'koa';
import type { RouteFactory } from '../../api/deps.js';
import { streamEvents } from '../../api/sse.js';
import { jobState, type JobKind } from '../../jobs/kinds.js';
import { launchJob } from '../../jobs/launch.js';
import type { TestStack } from './stack.js';

/** A job kind for the foundation's tests, with the indexing service's status words. */
export const probeKind: JobKind = {
  name: 'probe',
  statuses: { queued: 'queued', running: 'running', done: 'done', failed: 'failed', cancelled: 'cancelled' },
  stateEvent: (job) => ({ event: 'status', data: jobState(job) }),
};

/** Exposes a job's stream through the shared SSE helper, the way each service mounts its own. */
export const probeRoutes: RouteFactory = (deps) => [
  {
    method: 'GET',
    path: '/api/probe/jobs/:id/stream',
    summary: 'Probe job events (tests only)',
    tags: ['test'],
    responses: { 200: { description: 'event stream', contentType: 'text/event-stream' } },
    handler: async (ctx: Context) => {
      const job = await deps.jobs.get(deps.orm.em, ctx.params.id!);
      const finished = (status: unknown) => ['done', 'failed', 'cancelled'].includes(String(status));
      await streamEvents(ctx, {
        hub: deps.hub,
        em: () => deps.orm.em.fork(),
        stream: `job:${job.id}`,
        heartbeatMs: deps.config.sseHeartbeatMs,
        initial: async () => [{ event: 'state', data: jobState(await deps.jobs.get(deps.orm.em, job.id)) }],
        endAfter: (e) => e.event === 'status' && finished(e.data.status),
      });
    },
  },
];

export async function launchProbe(stack: TestStack, steps: number, key?: string) {
  const workflowId = `probe:${key ?? Math.random().toString(36).slice(2)}`;
  return launchJob(
    { em: stack.orm.em.fork(), jobs: stack.jobs, temporal: stack.temporal, config: stack.config },
    {
      kind: 'probe',
      status: 'queued',
      workflowId,
      workflowType: 'probeJobWorkflow',
      queue: 'indexing',
      args: (job) => [job.id, steps],
      subject: workflowId,
      activeKey: workflowId,
      topics: ['probe-topic'],
    },
  );
}
