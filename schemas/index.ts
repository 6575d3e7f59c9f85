import type { SchemaObject } from 'ajv';
import error from './api/error.schema.json' with { type: 'json' };
import health from './api/health.schema.json' with { type: 'json' };
import healthzQuery from './api/healthz.query.schema.json' with { type: 'json' };
import findingsLedger from './findings-ledger.schema.json' with { type: 'json' };
import notificationsSubscribeBody from './api/notifications.subscribe.body.schema.json' with { type: 'json' };
import notificationsSubscribe from './api/notifications.subscribe.schema.json' with { type: 'json' };
import notificationsUnsubscribeBody from './api/notifications.unsubscribe.body.schema.json' with { type: 'json' };
import notificationsVapidKey from './api/notifications.vapid-key.schema.json' with { type: 'json' };

/**
 * The JSON Schemas the platform's own routes name (errors, health, web push) and the findings ledger's file format.
 * Each service keeps its routes' schemas in its own folder (transcription/schemas.ts and the like); routes name
 * them for validation (api/validate.ts) and the OpenAPI document (api/routes.ts) is built from the same objects.
 */
export const apiSchemas = {
  error: error as SchemaObject,
  health: health as SchemaObject,
  healthzQuery: healthzQuery as SchemaObject,
  findingsLedger: findingsLedger as SchemaObject,
  notificationsSubscribeBody: notificationsSubscribeBody as SchemaObject,
  notificationsSubscribe: notificationsSubscribe as SchemaObject,
  notificationsUnsubscribeBody: notificationsUnsubscribeBody as SchemaObject,
  notificationsVapidKey: notificationsVapidKey as SchemaObject,
};
