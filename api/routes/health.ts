import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { taskQueue } from '../../core/config.js';
import { apiSchemas } from '../../schemas/index.js';
import type { pingWorkflow } from '../../workflows/health.js';
import type { AppDeps } from '../deps.js';
import type { RouteSpec } from '../routes.js';

interface Check {
  ok: boolean;
  latencyMs: number;
  error?: string;
  answeredBy?: string;
}

async function timed(fn: () => Promise<string | void>): Promise<Check> {
  const t0 = performance.now();
  try {
    const answeredBy = await fn();
    return { ok: true, latencyMs: Math.round(performance.now() - t0), ...(answeredBy && { answeredBy }) };
  } catch (err) {
    return { ok: false, latencyMs: Math.round(performance.now() - t0), error: (err as Error).message };
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const isDeep = (v: unknown) => ['1', 'true'].includes(String(v));

export function healthRoutes(deps: AppDeps): RouteSpec[] {
  const { config, orm, temporal } = deps;

  /** A ping workflow per task queue; one that nobody picks up is terminated so it does not linger. */
  const probeQueue = async (queue: string): Promise<string> => {
    const handle = await temporal.workflow.start<typeof pingWorkflow>('pingWorkflow', {
      taskQueue: queue,
      workflowId: `healthz:${queue}:${randomUUID()}`,
      args: [queue],
      workflowRunTimeout: '1 minute',
    });
    try {
      return (await withTimeout(handle.result(), deps.healthProbeTimeoutMs, `task queue ${queue}`)).answeredBy;
    } catch (err) {
      await handle.terminate('health probe timed out').catch(() => undefined);
      throw err;
    }
  };

  return [
    {
      method: 'GET',
      path: '/healthz',
      summary: 'Health of the database and Temporal; with deep=1, of every task queue',
      description:
        'Answers 200 when every check passed and 503 otherwise. `deep=1` runs a tiny workflow on each task queue ' +
        '(indexing, transcription, recipes) and reports which ones a worker answered.',
      tags: ['operations'],
      // Plain health is for load balancers and probes; the deep check starts workflows, so it wants the key.
      access: (ctx) => (isDeep(ctx.query.deep) ? 'key' : 'open'),
      query: apiSchemas.healthzQuery,
      responses: {
        200: { description: 'Healthy', schema: apiSchemas.health },
        503: { description: 'A check failed', schema: apiSchemas.health },
      },
      handler: async (ctx: Context) => {
        const deep = isDeep(ctx.state.query?.deep);
        const [database, temporalCheck, queueChecks] = await Promise.all([
          timed(async () => {
            await withTimeout(orm.em.fork().execute('select 1'), 5000, 'PostgreSQL');
          }),
          timed(async () => {
            await withTimeout(temporal.workflowService.getSystemInfo({}), 5000, 'Temporal');
          }),
          deep
            ? Promise.all(deps.taskQueues.map(async (name) => [name, await timed(() => probeQueue(taskQueue(config, name)))] as const))
            : undefined,
        ]);
        const queues = queueChecks && Object.fromEntries(queueChecks);
        const ok = database.ok && temporalCheck.ok && (!queues || Object.values(queues).every((q) => q.ok));
        ctx.status = ok ? 200 : 503;
        ctx.body = { status: ok ? 'ok' : 'error', checks: { database, temporal: temporalCheck }, ...(queues && { queues }) };
      },
    },
  ];
}
