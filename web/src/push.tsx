import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { ErrorText, messageOf, useAction } from './components.js';

/**
 * Web push opt-in, shared by every page that notifies: one subscription per browser receives every notification
 * (transcripts ready, recipes imported). It says plainly why push is unavailable when it is.
 */
const CLIENT_ID_STORAGE = 'gristmill.clientId';

function clientId(): string {
  let id = localStorage.getItem(CLIENT_ID_STORAGE);
  if (!id) {
    id = crypto.randomUUID();
    localStorage.setItem(CLIENT_ID_STORAGE, id);
  }
  return id;
}

/** Why this browser cannot subscribe, or null when it can try. */
export function pushUnavailableReason(): string | null {
  if (!window.isSecureContext) return 'Push notifications need HTTPS (or localhost): open Gristmill over https to turn them on.';
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window)) {
    return 'This browser cannot receive push notifications.';
  }
  if (Notification.permission === 'denied') return "Notifications are blocked for this site: allow them in the browser's site settings, then reload.";
  return null;
}

function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const base64 = (base64url + '='.repeat((4 - (base64url.length % 4)) % 4)).replace(/-/g, '+').replace(/_/g, '/');
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

async function registration(): Promise<ServiceWorkerRegistration> {
  await navigator.serviceWorker.register('/sw.js');
  return navigator.serviceWorker.ready;
}

async function subscribe(): Promise<void> {
  let publicKey: string;
  try {
    publicKey = (await api<{ publicKey: string }>('/api/notifications/vapid-key')).publicKey;
  } catch (err) {
    throw new Error(`Push is unavailable: the server has no VAPID key configured (${messageOf(err)}).`);
  }
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') throw new Error('Notifications were not allowed, so nothing was turned on.');
  const reg = await registration();
  const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(publicKey) });
  await api('/api/notifications/subscribe', { method: 'POST', body: { subscription: sub.toJSON(), clientId: clientId() } });
}

async function unsubscribe(sub: PushSubscription): Promise<void> {
  await api('/api/notifications/unsubscribe', { method: 'POST', body: { endpoint: sub.endpoint, clientId: clientId() } });
  await sub.unsubscribe();
}

export function PushOptIn() {
  const unavailable = pushUnavailableReason();
  const [current, setCurrent] = useState<PushSubscription | null>(null);
  const action = useAction();
  const refresh = async () => {
    const reg = await navigator.serviceWorker.getRegistration('/');
    setCurrent((await reg?.pushManager.getSubscription()) ?? null);
  };
  useEffect(() => {
    if (!unavailable) void refresh().catch(() => setCurrent(null));
  }, [unavailable]);

  return (
    <div class="push">
      <p class="hint">A notification on this device when a transcript is ready or a recipe is imported.</p>
      {unavailable ? (
        <p class="notice" role="status" data-testid="push-unavailable">
          {unavailable}
        </p>
      ) : current ? (
        <p>
          <span role="status">Notifications are on for this browser.</span>{' '}
          <button type="button" class="secondary" disabled={action.busy} onClick={() => action.run(async () => (await unsubscribe(current), await refresh()))}>
            Turn off
          </button>
        </p>
      ) : (
        <button type="button" disabled={action.busy} onClick={() => action.run(async () => (await subscribe(), await refresh()))}>
          Turn on notifications
        </button>
      )}
      <ErrorText error={action.error} />
    </div>
  );
}
