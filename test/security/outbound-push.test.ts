import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { PushSubscription } from '../../db/entities/push-subscription.js';
import { PushService } from '../../push/service.js';
import { json } from '../support/http.js';
import { BrowserSubscriber, FakePushService } from '../../fakes/push-service.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Push subscription endpoints are URLs a browser, or anyone calling the API, chooses: one at an
 * internal address is refused when it is stored, and a push is never sent to one (a subscription stored before,
 * or a name that resolves inside later). The fake push service listens on 127.0.0.1, which this stack does not
 * allow.
 */
let stack: TestStack;
let pushService: FakePushService;

beforeAll(async () => {
  pushService = await FakePushService.start();
  stack = await startTestStack({ queues: [], env: { OUTBOUND_ALLOW: '127.0.0.2', PUSH_CA_FILE: pushService.caFile } });
});
afterAll(async () => {
  await stack?.stop();
  await pushService?.close();
});

const subscribe = (body: unknown) =>
  fetch(`${stack.url}/api/notifications/subscribe`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

describe('push endpoints at internal addresses', () => {
  it('are refused when subscribing: 400 ADDRESS_NOT_ALLOWED, nothing stored', async () => {
    const port = new URL(pushService.url).port;
    for (const endpoint of [
      `${pushService.url}/push/direct`,
      `https://localhost:${port}/push/by-name`,
      `https://[::ffff:127.0.0.1]:${port}/push/mapped`,
      `https://2130706433:${port}/push/decimal`,
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.8/push/private',
    ]) {
      const res = await subscribe({ clientId: 'attacker', subscription: new BrowserSubscriber(endpoint).toJSON() });
      const body = await json(res);
      expect(res.status, endpoint).toBe(400);
      expect(body.code).toBe('ADDRESS_NOT_ALLOWED');
      expect(body.error).toMatch(/^The push endpoint was refused: .* address; /);
      expect(body.details[0].pointer).toBe('/body/subscription/endpoint');
    }
    expect(await stack.orm.em.fork().count(PushSubscription, {})).toBe(0);
    expect(pushService.requests).toEqual([]);
  });

  it('are never sent to, even when stored before: the subscription is kept with the reason', async () => {
    const em = stack.orm.em.fork();
    const keys = new BrowserSubscriber('https://x').toJSON().keys;
    em.create(PushSubscription, {
      id: randomUUID(),
      clientId: 'old',
      endpoint: `${pushService.url}/push/stored-before`,
      p256dh: keys.p256dh,
      auth: keys.auth,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    await em.flush();
    const push = new PushService({ config: stack.config, log: createLogger('silent') });
    expect(await push.sendToAll(stack.orm.em.fork(), { title: 'Transcript ready', body: 'A talk' })).toEqual({ sent: 0, removed: 0, failed: 1 });
    const [row] = await stack.orm.em.fork().find(PushSubscription, {});
    expect(row!.lastError).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(pushService.requests).toEqual([]);
  });
});
