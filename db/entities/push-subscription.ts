import { defineEntity, type InferEntity } from '@mikro-orm/core';

/**
 * A browser push subscription (Push API `PushSubscription.toJSON()`) and the client that registered it. Shared by
 * every service that notifies. One row per (clientId, endpoint); a push service answering 404 or 410 deletes it.
 */
export const PushSubscription = defineEntity({
  name: 'PushSubscription',
  tableName: 'push_subscription',
  properties: (p) => ({
    id: p.string().primary(),
    clientId: p.string(),
    endpoint: p.text(),
    /** The subscription's keys: `p256dh` (the browser's P-256 public key) and `auth` (its auth secret). */
    p256dh: p.string(),
    auth: p.string(),
    /** When the browser says the subscription ends (ms since the epoch), if it does. */
    expirationTime: p.bigint('number').nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    lastSuccessAt: p.datetime().nullable(),
    lastError: p.text().nullable(),
  }),
  uniques: [{ name: 'push_subscription_client_id_endpoint_unique', properties: ['clientId', 'endpoint'] }],
});
export type PushSubscription = InferEntity<typeof PushSubscription>;
