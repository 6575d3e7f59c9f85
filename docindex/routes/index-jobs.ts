import type { Context } from 'koa';
import { findLibrary, findIndexJob, listJobs } from '../service.js';
import { serializeIndexJob } from '../kind.js';
import type { StoredEvent } from '../../jobs/events.js';
import { apiSchemas } from '../../schemas/index.js';
import { docindexSchemas } from '../schemas.js';
import type { AppDeps, RouteFactory } from '../../api/deps.js';
import { streamEvents } from '../../api/sse.js';

/** Every broadcast is an unnamed message `{jobId, repositoryId, versionId, event, data}`. */
function broadcast(e: StoredEvent) {
  const { jobId, repositoryId, versionId, ...data } = e.data;
  return { data: { jobId, repositoryId, versionId, event: e.event, data } };
}

const FINISHED = new Set(['done', 'failed']);
const finishes = (e: StoredEvent) => e.event === 'status' && FINISHED.has(String(e.data.status));

function lenientLimit(raw: unknown): number {
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, 200) : 20;
}

export const indexJobRoutes: RouteFactory = (deps: AppDeps) => {
  const tags = ['documentation index'];
  const sse = (ctx: Context, stream: string, extra: Partial<Parameters<typeof streamEvents>[1]> = {}) =>
    streamEvents(ctx, { hub: deps.hub, em: () => deps.orm.em.fork(), stream, heartbeatMs: deps.config.sseHeartbeatMs, format: broadcast, ...extra });
  return [
    {
      method: 'GET',
      path: '/api/v1/jobs',
      summary: 'List indexing jobs, newest first',
      tags,
      query: docindexSchemas.jobsQuery,
      responses: { 200: { description: '`{jobs, total}`' } },
      handler: async (ctx: Context) => {
        const q = ctx.state.query as { repositoryId?: string; status?: string; limit?: string };
        ctx.body = await listJobs(deps, { repositoryId: q.repositoryId, status: q.status, limit: lenientLimit(q.limit) });
      },
    },
    {
      method: 'GET',
      path: '/api/v1/jobs/stream',
      summary: 'Events of every library, or of one with repositoryId (server-sent events)',
      description: 'Messages are `{jobId, repositoryId, versionId, event, data}`; `id:` is the position in the stream, for Last-Event-ID.',
      tags,
      query: docindexSchemas.jobsStreamQuery,
      responses: { 200: { description: 'event stream', contentType: 'text/event-stream' }, 503: { description: 'BROADCASTER_UNAVAILABLE', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        const repositoryId = ctx.state.query?.repositoryId as string | undefined;
        if (repositoryId) await findLibrary(deps.orm.em.fork(), repositoryId);
        await sse(ctx, repositoryId ? `repo:${repositoryId}` : 'kind:index');
      },
    },
    {
      method: 'GET',
      path: '/api/v1/jobs/:id',
      summary: 'An indexing job',
      tags,
      responses: { 200: { description: '`{job}`' }, 404: { description: 'JOB_NOT_FOUND', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        ctx.body = { job: serializeIndexJob(await findIndexJob(deps, ctx.params.id!)) };
      },
    },
    {
      method: 'GET',
      path: '/api/v1/jobs/:id/stream',
      summary: "A job's events (server-sent events)",
      description:
        'The first message is the current state (`event: "state"`). With Last-Event-ID, every event after it is replayed next. ' +
        'Then live events; the stream ends after the job is done or failed (at once when it already was).',
      tags,
      responses: { 200: { description: 'event stream', contentType: 'text/event-stream' }, 404: { description: 'JOB_NOT_FOUND', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        const job = await findIndexJob(deps, ctx.params.id!);
        await sse(ctx, `job:${job.id}`, {
          initial: async () => {
            const view = serializeIndexJob(await findIndexJob(deps, job.id));
            return [{ data: { jobId: view.id, repositoryId: view.repositoryId, versionId: view.versionId, event: 'state', data: view } }];
          },
          endAtOnce: job.completedAt != null,
          endAfter: finishes,
        });
      },
    },
  ];
};
