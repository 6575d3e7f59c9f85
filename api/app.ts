import http from 'node:http';
import Koa from 'koa';
import { browserGuard } from './browser-guard.js';
import type { AppDeps, RouteFactory } from './deps.js';
import { cors } from './cors.js';
import { errorHandler, type ErrorFormat } from './errors.js';
import { healthRoutes } from './routes/health.js';
import { notificationRoutes } from './routes/notifications.js';
import { Routes } from './routes.js';
import { webApp } from './web.js';

/** Errors that only say the client closed the connection. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'HPE_INVALID_EOF_STATE']);

/** What the services add to the app (runtime/services.ts): their routes, and error bodies of other shapes. */
export interface AppParts {
  routes: readonly RouteFactory[];
  errorFormats?: readonly ErrorFormat[];
}

/**
 * The Koa app: small middleware, in the order a request meets them, then the routes. The services' routes come
 * in `parts`; the OpenAPI document covers whatever was added.
 */
export function createApp(deps: AppDeps, parts: AppParts = { routes: [] }): Koa {
  const app = new Koa({ proxy: true });
  const routes = new Routes({ apiKey: deps.config.apiKey, bodyLimitBytes: deps.config.bodyLimitBytes });
  // The platform's own routes: health, and web push subscriptions shared by every service that notifies.
  routes.add(...healthRoutes(deps), ...notificationRoutes(deps));
  for (const factory of parts.routes) routes.add(...factory(deps));
  routes.add({
    method: 'GET',
    path: '/api/openapi.json',
    summary: 'This API as an OpenAPI 3.1 document',
    tags: ['operations'],
    access: 'open',
    responses: { 200: { description: 'The OpenAPI document' } },
    handler: async (ctx) => {
      ctx.body = openapi;
    },
  });
  const openapi = routes.openapi(
    {
      title: 'Gristmill API',
      version: '1',
      description: 'Documentation index, transcription and recipe extraction pipelines on Temporal.',
    },
    deps.config.publicBaseUrl,
  );

  // What Koa reports outside a middleware's try: a response stream failing, a client leaving mid-request. A client
  // that went away is routine; anything else is logged with its stack. Never printed raw, never fatal.
  app.on('error', (err: Error & { code?: string }, ctx?: Koa.Context) => {
    const fields = { method: ctx?.method, path: ctx?.path, error: err.message };
    if (ctx?.req.destroyed || CLIENT_GONE.has(err.code ?? '') || err.message === 'Parse Error') deps.log.debug('client went away', fields);
    else deps.log.warn('response failed', { ...fields, stack: err.stack });
  });
  app.use(errorHandler(deps.log));
  // A family of routes whose errors take another shape (Context7's `{error, message}`), auth failures included, so
  // it is chosen before auth.
  const formats = parts.errorFormats ?? [];
  app.use(async (ctx, next) => {
    const f = formats.find((x) => ctx.path.startsWith(x.prefix));
    if (f) ctx.state.formatError = f.format;
    await next();
  });
  app.use(cors(() => routes.specs));
  app.use(browserGuard(deps.config));
  // Who may call a route, its body and its checks are decided per route, on the route that answers (api/routes.ts).
  app.use(routes.router.routes());
  app.use(routes.router.allowedMethods({ throw: false }));
  // The web interface, for whatever the API does not answer (GET and HEAD outside /api, /mcp and /healthz).
  app.use(webApp(deps.log.child('web')));
  return app;
}

export interface RunningApi {
  server: http.Server;
  url: string;
  close(): Promise<void>;
}

/** Listens, and on close stops taking connections, ends open event streams and waits for requests in flight. */
export async function listen(app: Koa, deps: AppDeps, port: number, host: string): Promise<RunningApi> {
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as { port: number };
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`;
  deps.log.info('API listening', { url });
  if (!deps.config.apiKey && !/^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(host)) {
    deps.log.warn(
      'API_KEY is unset and the API listens beyond this machine: anyone who can reach it can use it, local folders ' +
        'under LOCAL_SOURCE_ROOTS included. Set API_KEY (docs/security.md).',
      { host },
    );
  }
  return {
    server,
    url,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
    },
  };
}
