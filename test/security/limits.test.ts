import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushSubscription } from '../../db/entities/push-subscription.js';
import { BrowserSubscriber } from '../../fakes/push-service.js';
import { rawRequest } from '../support/raw-http.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/** What one client can hold open or pile up (before: GET /mcp held an event stream open forever, without limit). */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ queues: [] });
});
afterAll(() => stack?.stop());

describe('the stateless MCP endpoint', () => {
  it('answers GET and DELETE with 405 at once, as the MCP transport says, with a JSON-RPC error', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await rawRequest(stack.url, { method, path: '/mcp', headers: { Accept: 'text/event-stream' }, headOnly: true, timeoutMs: 10_000 });
      expect(res.status, method).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(JSON.parse(res.text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    }
  });
});

/** push/service.ts: CAP. */
const CAP = 10;

describe('push subscriptions', () => {
  it(`are kept to the newest ${CAP} per client; other clients keep theirs`, async () => {
    const subscribe = (clientId: string, endpoint: string) =>
      fetch(`${stack.url}/api/notifications/subscribe`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ clientId, subscription: new BrowserSubscriber(endpoint).toJSON() }),
      });
    expect((await subscribe('other', 'https://push.example.com/other')).status).toBe(200);
    for (let i = 0; i < CAP + 15; i++) expect((await subscribe('greedy', `https://push.example.com/g${i}`)).status).toBe(200);
    const rows = await stack.orm.em.fork().find(PushSubscription, { clientId: 'greedy' });
    expect(rows.map((r) => r.endpoint).sort()).toEqual(Array.from({ length: CAP }, (_, k) => `https://push.example.com/g${k + 15}`).sort());
    expect(await stack.orm.em.fork().count(PushSubscription, { clientId: 'other' })).toBe(1);
  });
});
