import type { Context } from 'koa';
import { PushService, type BrowserSubscription } from '../../push/service.js';
import { apiSchemas } from '../../schemas/index.js';
import type { RouteFactory } from '../deps.js';

const TAGS = ['notifications'];

/** Web push subscriptions (docs/push.md), shared by every service that notifies. */
export const notificationRoutes: RouteFactory = (deps) => {
  const push = new PushService({ config: deps.config, log: deps.log.child('push') });
  const em = () => deps.orm.em.fork();
  return [
    {
      method: 'GET',
      path: '/api/notifications/vapid-key',
      summary: 'The VAPID public key, for PushManager.subscribe({applicationServerKey})',
      tags: TAGS,
      responses: { 200: { description: 'The key', schema: apiSchemas.notificationsVapidKey } },
      handler: async (ctx: Context) => {
        ctx.body = { publicKey: await push.publicKey() };
      },
    },
    {
      method: 'POST',
      path: '/api/notifications/subscribe',
      summary: 'Store a browser push subscription',
      description:
        'Adds (or refreshes) the subscription for the client; sending the same one again is harmless. Every ' +
        'service that notifies (transcripts ready, recipes imported) sends to all stored subscriptions; one the ' +
        'push service reports gone (404, 410) is deleted.',
      tags: TAGS,
      body: apiSchemas.notificationsSubscribeBody,
      responses: { 200: { description: 'Stored', schema: apiSchemas.notificationsSubscribe } },
      handler: async (ctx: Context) => {
        const body = (ctx.request as { body?: unknown }).body as { subscription: BrowserSubscription; clientId: string };
        const subscriptionCount = await push.subscribe(em(), body.clientId, body.subscription);
        ctx.body = { success: true, subscriptionCount };
      },
    },
    {
      method: 'POST',
      path: '/api/notifications/unsubscribe',
      summary: 'Forget a browser push subscription',
      tags: TAGS,
      body: apiSchemas.notificationsUnsubscribeBody,
      responses: { 200: { description: 'Forgotten (or never known)', schema: apiSchemas.notificationsSubscribe } },
      handler: async (ctx: Context) => {
        const body = (ctx.request as { body?: unknown }).body as { endpoint: string; clientId?: string };
        const subscriptionCount = await push.unsubscribe(em(), body.endpoint, body.clientId);
        ctx.body = { success: true, subscriptionCount };
      },
    },
  ];
};
