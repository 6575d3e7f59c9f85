import { PushService, type PushPayload, type SendSummary } from '../push/service.js';
import type { ActivityDeps } from './deps.js';

/** Web push as an activity, for every service's workflows: one message to every subscription. */
export function createPushActivities({ config, orm, log }: ActivityDeps) {
  const push = new PushService({ config, log: log.child('push') });
  return {
    async sendPushNotification(input: { payload: PushPayload; ttlSeconds?: number }): Promise<SendSummary> {
      return push.sendToAll(orm.em.fork(), input.payload, { ...(input.ttlSeconds !== undefined && { ttlSeconds: input.ttlSeconds }) });
    },
  };
}
export type PushActivities = ReturnType<typeof createPushActivities>;
