export { PushService, type BrowserSubscription, type PushPayload, type SendSummary } from './service.js';
export { loadVapidKeys, VAPID_FILE, type VapidKeys } from './vapid.js';
