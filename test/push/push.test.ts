import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import webpush from 'web-push';
import { loadConfig, readConfig } from '../../runtime/config.js';
import { createLogger } from '../../core/log.js';
import { redact } from '../../core/redact.js';
import { PushSubscription } from '../../db/entities/push-subscription.js';
import { loadVapidKeys } from '../../push/vapid.js';
import { PushService } from '../../push/service.js';
import { json } from '../support/http.js';
import { BrowserSubscriber, FakePushService, verifyVapid } from '../../fakes/push-service.js';
import { startTestStack, type TestStack } from '../support/stack.js';

let stack: TestStack;
let pushService: FakePushService;
beforeAll(async () => {
  pushService = await FakePushService.start();
  stack = await startTestStack({ queues: [], env: { PUSH_CA_FILE: pushService.caFile, VAPID_SUBJECT: 'mailto:ops@example.com' } });
});
afterAll(async () => {
  await stack?.stop();
  await pushService?.close();
});

const subscribe = (body: unknown) =>
  fetch(`${stack.url}/api/notifications/subscribe`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

describe('VAPID keys', () => {
  it('are generated once into DATA_DIR/vapid.json (mode 0600) when not configured, and served', async () => {
    const res = await fetch(`${stack.url}/api/notifications/vapid-key`);
    expect(res.status).toBe(200);
    const { publicKey } = await json(res);
    expect(Buffer.from(publicKey, 'base64url')).toHaveLength(65);
    const file = path.join(stack.dataDir, 'vapid.json');
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await fs.readFile(file, 'utf8'));
    expect(stored.publicKey).toBe(publicKey);
    // The private key is a secret from now on.
    expect(redact(`key=${stored.privateKey}`)).toBe('key=***');
    expect((await json(await fetch(`${stack.url}/api/notifications/vapid-key`))).publicKey).toBe(publicKey);
  });

  it('come from VAPID_PUBLIC_KEY / VAPID_PRIVATE_KEY when set; one without the other is a configuration error', async () => {
    const keys = webpush.generateVAPIDKeys();
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-vapid-'));
    const { config, secrets } = readConfig({ DATA_DIR: dir, VAPID_PUBLIC_KEY: keys.publicKey, VAPID_PRIVATE_KEY: keys.privateKey });
    expect(await loadVapidKeys(config, createLogger('silent'))).toMatchObject({ ...keys, source: 'environment', subject: 'mailto:gristmill@localhost' });
    expect(await fs.readdir(dir)).toEqual([]);
    expect(secrets).toEqual([keys.privateKey]); // registered by the caller (runtime/main.ts)
    expect(() => loadConfig({ VAPID_PUBLIC_KEY: keys.publicKey })).toThrow('Set both VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY, or neither');
    expect(() => loadConfig({ VAPID_PUBLIC_KEY: 'abc', VAPID_PRIVATE_KEY: keys.privateKey })).toThrow(/VAPID_PUBLIC_KEY must be 65 bytes/);
    expect(() => loadConfig({ VAPID_SUBJECT: 'ops@example.com' })).toThrow(/VAPID_SUBJECT must be a mailto/);
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://grist.example.com/' }).push.vapidSubject).toBe('https://grist.example.com');
    // A pair persisted by an earlier start (here restored with loose permissions) is used, and made private again.
    const restored = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-vapid-'));
    const persisted = webpush.generateVAPIDKeys();
    await fs.writeFile(path.join(restored, 'vapid.json'), JSON.stringify(persisted), { mode: 0o644 });
    const loaded = await loadVapidKeys(loadConfig({ DATA_DIR: restored }), createLogger('silent'));
    expect(loaded).toMatchObject({ ...persisted, source: path.join(restored, 'vapid.json') });
    expect((await fs.stat(path.join(restored, 'vapid.json'))).mode & 0o777).toBe(0o600);
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rm(restored, { recursive: true, force: true });
  });
});

describe('subscriptions', () => {
  it('stores one per client and endpoint, and validates them', async () => {
    const before = await stack.orm.em.fork().count(PushSubscription, {});
    const one = new BrowserSubscriber(`${pushService.url}/push/one`);
    let res = await subscribe({ clientId: 'a', subscription: one.toJSON() });
    expect(await json(res)).toEqual({ success: true, subscriptionCount: before + 1 });
    res = await subscribe({ clientId: 'a', subscription: one.toJSON() });
    expect(await json(res)).toEqual({ success: true, subscriptionCount: before + 1 });
    res = await subscribe({ clientId: 'b', subscription: one.toJSON() });
    expect(await json(res)).toEqual({ success: true, subscriptionCount: before + 2 });

    const bad = await subscribe({ clientId: 'a', subscription: { endpoint: 'http://push.example.com/x', keys: one.toJSON().keys } });
    expect(bad.status).toBe(400);
    expect((await json(bad)).details[0].pointer).toBe('/body/subscription/endpoint');
    expect((await subscribe({ clientId: 'a', subscription: { endpoint: `${pushService.url}/push/x` } })).status).toBe(400);
    expect((await subscribe({ subscription: one.toJSON() })).status).toBe(400);

    const gone = await fetch(`${stack.url}/api/notifications/unsubscribe`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ endpoint: one.endpoint, clientId: 'b' }),
    });
    expect(await json(gone)).toEqual({ success: true, subscriptionCount: before + 1 });
  });
});

describe('sendToAll', () => {
  it('delivers an encrypted, VAPID-signed message to each subscription, prunes 404/410, keeps other failures', async () => {
    const em = stack.orm.em.fork();
    await em.nativeDelete(PushSubscription, {});
    const push = new PushService({ config: stack.config, log: createLogger('silent') });
    const subs = ['ok', 'gone', 'expired', 'broken'].map((name) => new BrowserSubscriber(`${pushService.url}/push/${name}`));
    for (const [i, s] of subs.entries()) await push.subscribe(em, `client-${i}`, s.toJSON());
    pushService.statusFor.set('/push/gone', 410);
    pushService.statusFor.set('/push/expired', 404);
    pushService.statusFor.set('/push/broken', 500);
    const seen = pushService.requests.length;

    const summary = await push.sendToAll(em, { title: 'Transcript ready', body: 'A talk', tag: 'transcription:1' });
    expect(summary).toEqual({ sent: 1, removed: 2, failed: 1 });

    const requests = pushService.requests.slice(seen);
    expect(requests.map((r) => r.path).sort()).toEqual(['/push/broken', '/push/expired', '/push/gone', '/push/ok']);
    const ok = requests.find((r) => r.path === '/push/ok')!;
    expect(JSON.parse(subs[0]!.decrypt(ok.body))).toEqual({ title: 'Transcript ready', body: 'A talk', tag: 'transcription:1' });
    expect(verifyVapid(ok.headers.authorization as string, pushService.url).sub).toBe('mailto:ops@example.com');
    expect(ok.headers).toMatchObject({ ttl: '86400', urgency: 'normal', topic: 'transcription-1' });

    const left = await stack.orm.em.fork().find(PushSubscription, {}, { orderBy: { endpoint: 'asc' } });
    expect(left.map((s) => [s.endpoint.split('/').pop(), s.lastError === null, s.lastSuccessAt !== null])).toEqual([
      ['broken', false, false],
      ['ok', true, true],
    ]);
    expect(left[0]!.lastError).toContain('push service answered 500');
  });

  it('sends nothing, and succeeds, with no subscriptions', async () => {
    const em = stack.orm.em.fork();
    await em.nativeDelete(PushSubscription, {});
    const push = new PushService({ config: stack.config, log: createLogger('silent') });
    expect(await push.sendToAll(em, { title: 't', body: 'b' })).toEqual({ sent: 0, removed: 0, failed: 0 });
  });
});
