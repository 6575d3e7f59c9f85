// Gristmill's service worker: shows the API's push notifications ({title, body, tag, data}) and opens the page a
// notification points at. It caches nothing: every page and API call goes to the server.

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  let message = {};
  try {
    message = event.data ? event.data.json() : {};
  } catch {
    message = { body: event.data ? event.data.text() : '' };
  }
  const title = message.title || 'Gristmill';
  event.waitUntil(
    self.registration.showNotification(title, {
      body: message.body || '',
      tag: message.tag,
      data: message.data || {},
      icon: '/icon-192.png',
      badge: '/icon-192.png',
    }),
  );
});

/** A recipe's page in the recipe manager, else the app's page for that kind of job. */
function targetOf(data) {
  if (data && typeof data.url === 'string' && /^https?:\/\//.test(data.url)) return data.url;
  if (data && data.kind === 'recipe') return '/recipes';
  if (data && data.kind === 'transcription') return '/transcripts';
  return '/';
}

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const target = new URL(targetOf(event.notification.data), self.location.origin);
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
      const same = windows.find((w) => w.url === target.href);
      if (same) return same.focus();
      return self.clients.openWindow(target.href);
    }),
  );
});
