import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type https from 'node:https';
import tls from 'node:tls';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import webpush, { WebPushError } from 'web-push';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import { redact } from '../core/redact.js';
import { PushSubscription } from '../db/entities/push-subscription.js';
import { asValidationError, isAddressRefusal, outboundGuard } from '../outbound/guard.js';
import { loadVapidKeys } from './vapid.js';

/** What the browser's service worker receives (JSON): it shows `title` and `body`, and may use `data`. */
export interface PushPayload {
  title: string;
  body: string;
  /** Replaces an earlier notification with the same tag instead of stacking up. */
  tag?: string;
  /** Where a click leads, and whatever else the page needs. */
  data?: Record<string, unknown>;
}

/** A Push API subscription as `PushSubscription.toJSON()` gives it. */
export interface BrowserSubscription {
  endpoint: string;
  expirationTime?: number | null;
  keys: { p256dh: string; auth: string };
}

export interface SendSummary {
  /** Subscriptions the push service accepted the message for. */
  sent: number;
  /** Subscriptions the push service said are gone (404, 410): deleted. */
  removed: number;
  /** Other failures: the subscription is kept, with the error. */
  failed: number;
}

/** Subscriptions kept per client; subscribing again beyond this drops its oldest. */
export const MAX_SUBSCRIPTIONS_PER_CLIENT = 10;

/** Sends at most this many requests at a time. */
const CONCURRENCY = 8;

/**
 * Web push for every service: subscriptions in PostgreSQL, VAPID keys from the environment or DATA_DIR, one
 * `sendToAll`. Each subscription is sent on its own, so one bad subscription never stops the others.
 */
export class PushService {
  private agent: https.Agent | undefined;

  constructor(private readonly deps: { config: Config; log: Logger }) {}

  publicKey(): Promise<string> {
    return loadVapidKeys(this.deps.config, this.deps.log).then((k) => k.publicKey);
  }

  /**
   * Adds or refreshes a subscription; answers how many there are in all. The endpoint is a URL the client chose: one
   * at an address the outbound guard refuses is 400 ADDRESS_NOT_ALLOWED (and sending checks it again).
   */
  async subscribe(em: EntityManager, clientId: string, sub: BrowserSubscription): Promise<number> {
    await outboundGuard(this.deps.config)
      .checkUrl(sub.endpoint, 'The push endpoint')
      .catch((err: unknown) => {
        throw isAddressRefusal(err) ? asValidationError(err, '/body/subscription/endpoint') : err;
      });
    const now = new Date();
    const fields = {
      p256dh: sub.keys.p256dh,
      auth: sub.keys.auth,
      expirationTime: typeof sub.expirationTime === 'number' ? Math.round(sub.expirationTime) : null,
      updatedAt: now,
      lastError: null,
    };
    const upsert = async () => {
      const fork = em.fork();
      const existing = await fork.findOne(PushSubscription, { clientId, endpoint: sub.endpoint });
      if (existing) fork.assign(existing, fields);
      else fork.create(PushSubscription, { id: randomUUID(), clientId, endpoint: sub.endpoint, createdAt: now, ...fields });
      await fork.flush();
    };
    try {
      await upsert();
    } catch (err) {
      // The same subscription arrived twice at once: the second write updates the first.
      if (!(err instanceof UniqueConstraintViolationException)) throw err;
      await upsert();
    }
    // A browser has one subscription (a new one after the push service replaced it): beyond a few per client, the
    // oldest go, so a client that keeps subscribing does not pile up endpoints. (A caller inventing client ids is
    // only stopped by API_KEY: see docs/security.md.)
    await em.fork().execute(
      `delete from push_subscription where client_id = ? and id not in
         (select id from push_subscription where client_id = ? order by updated_at desc, id desc limit ?)`,
      [clientId, clientId, MAX_SUBSCRIPTIONS_PER_CLIENT],
    );
    return this.count(em);
  }

  async unsubscribe(em: EntityManager, endpoint: string, clientId?: string): Promise<number> {
    await em.fork().nativeDelete(PushSubscription, { endpoint, ...(clientId && { clientId }) });
    return this.count(em);
  }

  count(em: EntityManager): Promise<number> {
    return em.fork().count(PushSubscription, {});
  }

  /**
   * Endpoints are clients' URLs: every connection goes through the outbound guard. Trusts the system CAs plus
   * PUSH_CA_FILE (a self-hosted push service with a private CA).
   */
  private httpsAgent(): https.Agent {
    const caFile = this.deps.config.push.caFile;
    this.agent ??= outboundGuard(this.deps.config).httpsAgent({
      keepAlive: true,
      ...(caFile && { ca: [...tls.rootCertificates, fs.readFileSync(caFile, 'utf8')] }),
    });
    return this.agent;
  }

  async sendToAll(em: EntityManager, payload: PushPayload, opts: { ttlSeconds?: number; urgency?: 'low' | 'normal' | 'high' } = {}): Promise<SendSummary> {
    const subs = await em.fork().find(PushSubscription, {}, { orderBy: { createdAt: 'asc' } });
    const summary: SendSummary = { sent: 0, removed: 0, failed: 0 };
    if (!subs.length) return summary;
    const keys = await loadVapidKeys(this.deps.config, this.deps.log);
    const body = JSON.stringify(payload);
    const agent = this.httpsAgent();
    const queue = [...subs];
    const worker = async () => {
      for (let sub = queue.shift(); sub; sub = queue.shift()) {
        const outcome = await this.sendOne(sub, body, {
          vapidDetails: { subject: keys.subject, publicKey: keys.publicKey, privateKey: keys.privateKey },
          TTL: opts.ttlSeconds ?? 24 * 3600,
          urgency: opts.urgency ?? 'normal',
          timeout: 15_000,
          ...(payload.tag && { topic: topicOf(payload.tag) }),
          agent,
        });
        await this.record(em, sub, outcome);
        summary[outcome.kind]++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, subs.length) }, worker));
    this.deps.log.debug('push sent', { ...summary });
    return summary;
  }

  private async sendOne(
    sub: PushSubscription,
    body: string,
    options: webpush.RequestOptions,
  ): Promise<{ kind: 'sent' } | { kind: 'removed' | 'failed'; error: string }> {
    try {
      await webpush.sendNotification({ endpoint: sub.endpoint, keys: { p256dh: sub.p256dh, auth: sub.auth } }, body, options);
      return { kind: 'sent' };
    } catch (err) {
      if (err instanceof WebPushError && (err.statusCode === 404 || err.statusCode === 410)) {
        return { kind: 'removed', error: `push service answered ${err.statusCode}` };
      }
      const message =
        err instanceof WebPushError ? `push service answered ${err.statusCode}: ${String(err.body).slice(0, 200)}` : (err as Error).message;
      return { kind: 'failed', error: redact(message) };
    }
  }

  private async record(em: EntityManager, sub: PushSubscription, outcome: { kind: string; error?: string }): Promise<void> {
    const fork = em.fork();
    if (outcome.kind === 'removed') {
      await fork.nativeDelete(PushSubscription, { id: sub.id });
      this.deps.log.info('push subscription removed: the push service says it is gone', { clientId: sub.clientId });
    } else if (outcome.kind === 'sent') {
      await fork.nativeUpdate(PushSubscription, { id: sub.id }, { lastSuccessAt: new Date(), lastError: null });
    } else {
      await fork.nativeUpdate(PushSubscription, { id: sub.id }, { lastError: outcome.error ?? 'failed' });
      this.deps.log.warn('push failed for a subscription; kept', { clientId: sub.clientId, error: outcome.error });
    }
  }
}

/** The Topic header allows at most 32 URL-safe base64 characters: longer tags are hashed. */
function topicOf(tag: string): string {
  const safe = tag.replace(/[^A-Za-z0-9_-]/g, '-');
  return safe.length <= 32 ? safe : createHash('sha256').update(tag).digest('base64url').slice(0, 32);
}
