import { timingSafeEqual, createHash } from 'node:crypto';
import type { Context, Next } from 'koa';
import { UnauthorizedError } from '../core/errors.js';

/** Paths under /api that authenticate otherwise (webhooks carry a per-job secret) or are public documents. */
const OPEN_PATHS = [/^\/api\/webhooks\//, /^\/api\/openapi\.json$/];

const digest = (s: string) => createHash('sha256').update(s).digest();

/** What API_KEY protects: the REST routes, the MCP endpoint, and the deep health check (it starts workflows). */
const isProtected = (ctx: Context) =>
  /^\/(api\/|mcp$)/.test(ctx.path) || (ctx.path === '/healthz' && ['1', 'true'].includes(String(ctx.query.deep)));

/** With API_KEY set, those want `Authorization: Bearer <key>`; compared in constant time. */
export function apiKeyAuth(apiKey: string | undefined) {
  const expected = apiKey ? digest(apiKey) : undefined;
  return async function requireApiKey(ctx: Context, next: Next): Promise<void> {
    if (expected && isProtected(ctx) && ctx.method !== 'OPTIONS' && !OPEN_PATHS.some((re) => re.test(ctx.path))) {
      const m = /^Bearer\s+(.+)$/i.exec(ctx.get('Authorization'));
      if (!m || !timingSafeEqual(digest(m[1]!.trim()), expected)) {
        ctx.set('WWW-Authenticate', 'Bearer');
        throw new UnauthorizedError();
      }
    }
    await next();
  };
}
