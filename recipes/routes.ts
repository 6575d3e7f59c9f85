import type { Context } from 'koa';
import { ValidationError } from '../core/errors.js';
import { lastSeq, type StoredEvent } from '../jobs/events.js';
import { FINISHED_STATUSES, type QueueStatus, type RecipeOptions } from './contract.js';
import { QUEUE_UPDATE } from './kind.js';
import { RecipeQueue } from './service.js';
import { apiSchemas } from '../schemas/index.js';
import { recipesSchemas } from './schemas.js';
import type { RouteFactory } from '../api/deps.js';
import type { ErrorFormatter } from '../api/errors.js';
import { lastEventId, type SseMessage, streamEvents } from '../api/sse.js';

const TAGS = ['recipe queue'];
const itemResponse = { description: 'The queue item', schema: recipesSchemas.recipesItem };
const notFound = { description: 'ITEM_NOT_FOUND', schema: apiSchemas.error };
const stream = { description: 'Server-sent events; each queue-update carries this', contentType: 'text/event-stream', schema: recipesSchemas.recipesUpdate };

/** The retry answers `{success, message}`, failures included (docs/recipes.md). */
const retryError: ErrorFormatter = (e) => ({ success: false, message: e.message, code: e.code });

/** The deprecated synchronous endpoints go away on this date (RFC 8594). */
export const SUNSET = 'Wed, 30 Jun 2027 23:59:59 GMT';
function deprecated(ctx: Context, successor: string): void {
  ctx.set('Deprecation', 'true');
  ctx.set('Sunset', SUNSET);
  ctx.set('Link', `<${successor}>; rel="successor-version"`);
}

const finishes = (e: StoredEvent) => e.event === QUEUE_UPDATE && FINISHED_STATUSES.includes(e.data.status as QueueStatus);
const asQueueUpdate = (e: StoredEvent): SseMessage | null => (e.event === QUEUE_UPDATE ? { event: QUEUE_UPDATE, data: e.data } : null);

/**
 * The recipe queue (docs/recipes.md) under /api/queue, and the deprecated synchronous /api/extract and /api/extract-stream.
 * See docs/recipes.md for the flow, the failure classes and the events.
 */
export const recipeRoutes: RouteFactory = (deps) => {
  const { config, orm, hub } = deps;
  const queue = new RecipeQueue({ config, log: deps.log.child('recipes'), em: () => orm.em.fork(), jobs: deps.jobs, temporal: deps.temporal, hub });

  /** `connection` first, then (following one item, not resuming) its current state, then its or every item's updates. */
  const follow = async (ctx: Context, itemId: string | undefined, opts: { endWithItem?: boolean } = {}) => {
    const from = lastEventId(ctx);
    let finished = false;
    await streamEvents(ctx, {
      hub,
      em: () => orm.em.fork(),
      stream: itemId ? `job:${itemId}` : 'kind:recipe',
      heartbeatMs: config.sseHeartbeatMs,
      heartbeat: 'event',
      initial: async () => {
        const hello: SseMessage = { event: 'connection', data: { connected: true, ...(itemId && { itemId }), timestamp: new Date().toISOString() } };
        if (!itemId || from !== undefined) return [hello];
        const now = await queue.currentUpdate(itemId);
        finished = FINISHED_STATUSES.includes(now.status);
        return [hello, { event: QUEUE_UPDATE, data: now }];
      },
      format: asQueueUpdate,
      ...(opts.endWithItem && { endAfter: finishes, endAtOnce: () => finished }),
    });
  };

  return [
    {
      method: 'POST',
      path: '/api/queue',
      summary: 'Queue a social-media post for recipe extraction',
      description:
        'Answers at once with the item (`pending`); extraction, parsing and uploading run in the background (follow ' +
        'them at /api/queue/stream?itemId=). A post the queue already has (the same URL once normalised: no ' +
        'fragment or tracking parameters, www./m. and a trailing slash ignored) answers 200 with that item, whatever ' +
        'its status; retry a failed one with POST /api/queue/:id/retry. 400 INVALID_URL for anything but an absolute ' +
        'http(s) URL. `language` (a BCP 47 tag) and `units` (metric, us, keep) ask for the recipe in another language ' +
        'or unit system than RECIPE_LANGUAGE and RECIPE_UNITS; 400 INVALID_LANGUAGE for a language that is not known.',
      tags: TAGS,
      body: recipesSchemas.recipesCreate,
      responses: {
        201: { description: 'Queued (pending)', schema: recipesSchemas.recipesItem },
        200: { description: 'The item the queue already has for this post', schema: recipesSchemas.recipesItem },
      },
      handler: async (ctx: Context) => {
        const { url, ...options } = (ctx.request as { body?: unknown }).body as { url: string } & RecipeOptions;
        const { item, created } = await queue.enqueue(url, undefined, options);
        ctx.status = created ? 201 : 200;
        ctx.set('Location', `/api/queue/${item.id}`);
        ctx.body = item;
      },
    },
    {
      method: 'GET',
      path: '/api/queue',
      summary: 'List queue items, newest first',
      tags: TAGS,
      query: recipesSchemas.recipesListQuery,
      responses: { 200: { description: 'A page of items', schema: recipesSchemas.recipesList } },
      handler: async (ctx: Context) => {
        ctx.body = await queue.list(ctx.state.query as { status?: QueueStatus; limit: number; offset: number });
      },
    },
    {
      method: 'GET',
      path: '/api/queue/stream',
      summary: 'Live updates of the queue (server-sent events)',
      description:
        'Named events: `connection` once when the stream opens; `queue-update` {itemId, status, timestamp, progress ' +
        '(the phases), results?, error?} for every change of an item (with `itemId`, only that item, starting with ' +
        'its current state); `ping` every SSE_HEARTBEAT_MS. Every message has an id: reconnecting with Last-Event-ID ' +
        '(or ?lastEventId=) replays exactly what was missed.',
      tags: TAGS,
      query: recipesSchemas.recipesStreamQuery,
      responses: { 200: stream, 404: notFound, 503: { description: 'BROADCASTER_UNAVAILABLE', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        const itemId = (ctx.state.query as { itemId?: string }).itemId;
        if (itemId) await queue.get(itemId);
        await follow(ctx, itemId);
      },
    },
    {
      method: 'GET',
      path: '/api/queue/:id',
      summary: 'A queue item, with its phases and results',
      tags: TAGS,
      responses: { 200: itemResponse, 404: notFound },
      handler: async (ctx: Context) => {
        ctx.body = await queue.get(ctx.params.id!);
      },
    },
    {
      method: 'POST',
      path: '/api/queue/:id/retry',
      summary: 'Run a failed item again',
      description:
        'Only items in `error` or `unhealthy`: the item is `pending` again (same id, phases and results cleared, ' +
        '`runs` + 1) and goes through the queue. Every answer is `{success, message}`: 200 with the item; 404 ' +
        'ITEM_NOT_FOUND; 409 ITEM_NOT_RETRYABLE (pending, in_progress, success).',
      tags: TAGS,
      responses: {
        200: { description: 'Queued again', schema: recipesSchemas.recipesRetry },
        404: { description: 'No such item', schema: recipesSchemas.recipesRetry },
        409: { description: 'Not in error or unhealthy', schema: recipesSchemas.recipesRetry },
      },
      handler: async (ctx: Context) => {
        ctx.state.formatError = retryError;
        const item = await queue.retry(ctx.params.id!);
        ctx.body = { success: true, message: `Item ${item.id} is queued again (run ${item.runs})`, item };
      },
    },
    {
      method: 'POST',
      path: '/api/extract',
      summary: 'Deprecated: extract a recipe synchronously (use POST /api/queue)',
      deprecated: true,
      description:
        'Queues the post like POST /api/queue (same dedupe) and waits for the item, up to QUEUE_EXTRACT_WAIT_MS: 200 ' +
        'with the item when it succeeded; 422 EXTRACTION_FAILED (error) or 502 EXTRACTION_UNHEALTHY (unhealthy) with ' +
        'the item; 202 with the item and its Location when it is still running. Answers carry `Deprecation: true`, ' +
        `\`Sunset: ${SUNSET}\` and \`Link: </api/queue>; rel="successor-version"\`.`,
      tags: TAGS,
      body: recipesSchemas.recipesCreate,
      responses: {
        200: { description: 'Extracted and uploaded', schema: recipesSchemas.recipesItem },
        202: { description: 'Still running; follow it at /api/queue/:id', schema: recipesSchemas.recipesItem },
        422: { description: 'The item failed permanently', schema: recipesSchemas.recipesExtractResult },
        502: { description: 'The item failed for now (unhealthy)', schema: recipesSchemas.recipesExtractResult },
      },
      handler: async (ctx: Context) => {
        deprecated(ctx, '/api/queue');
        const { url, ...options } = (ctx.request as { body?: unknown }).body as { url: string } & RecipeOptions;
        const { item } = await queue.enqueue(url, undefined, options);
        // A client that gives up stops the wait (the item carries on in the queue).
        const gone = new AbortController();
        const onClose = () => {
          if (!ctx.res.writableEnded) gone.abort();
        };
        ctx.res.once('close', onClose);
        try {
          const view = await queue.waitForEnd(item.id, config.recipes.extractWaitMs, gone.signal);
          ctx.set('Location', `/api/queue/${view.id}`);
          if (view.status === 'success') {
            ctx.body = view;
          } else if (view.status === 'error' || view.status === 'unhealthy') {
            ctx.status = view.status === 'error' ? 422 : 502;
            ctx.body = { error: view.error ?? 'The recipe could not be extracted', code: view.status === 'error' ? 'EXTRACTION_FAILED' : 'EXTRACTION_UNHEALTHY', item: view };
          } else {
            ctx.status = 202;
            ctx.body = view;
          }
        } finally {
          ctx.res.off('close', onClose);
        }
      },
    },
    {
      method: 'GET',
      path: '/api/extract-stream',
      summary: 'Deprecated: follow one extraction (use GET /api/queue/stream?itemId=)',
      deprecated: true,
      description:
        '`?url=` queues the post like POST /api/queue (or follows the item the queue has for it); `?itemId=` follows ' +
        'an item. The same events as /api/queue/stream?itemId= (`connection`, `queue-update`, `ping`), and the stream ' +
        'ends after the item succeeds or fails; reconnecting after the end gets 204. Answers carry `Deprecation`, ' +
        '`Sunset` and a successor `Link`.',
      tags: TAGS,
      query: recipesSchemas.recipesExtractStreamQuery,
      responses: { 200: stream, 204: { description: 'The item has ended and the client has every event' }, 404: notFound },
      handler: async (ctx: Context) => {
        deprecated(ctx, '/api/queue/stream');
        const q = ctx.state.query as { url?: string; itemId?: string };
        let id: string;
        if (q.url) id = (await queue.enqueue(q.url, '/query/url')).item.id;
        else if (q.itemId) id = (await queue.get(q.itemId)).id;
        else throw new ValidationError('Give the post as ?url= (or an item as ?itemId=)', 'VALIDATION_ERROR', [{ pointer: '/query/url', message: 'is required' }]);
        const from = lastEventId(ctx);
        const now = await queue.get(id);
        if (from !== undefined && FINISHED_STATUSES.includes(now.status) && from >= (await lastSeq(orm.em.fork(), `job:${id}`))) {
          ctx.status = 204;
          return;
        }
        await follow(ctx, id, { endWithItem: true });
      },
    },
  ];
};
