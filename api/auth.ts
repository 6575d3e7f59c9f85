import { timingSafeEqual, createHash } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { UnauthorizedError } from '../core/errors.js';

/**
 * Who may call a route when API_KEY is set: `key` wants `Authorization: Bearer <key>`; `open` never does (public
 * documents such as /api/openapi.json, and webhooks, which authenticate their caller themselves). A function decides
 * per request (the health check wants the key only for its deep probe, which starts workflows).
 */
export type Access = 'key' | 'open';
export type AccessRule = Access | ((ctx: Context) => Access);

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The one authorisation decision. It runs first in the middleware of the route the router matched (api/routes.ts),
 * so it is made on exactly the route that will answer: a path the router does not match (other case, a trailing or
 * doubled slash, an encoded letter) reaches no route at all. Routes want the key unless they say otherwise. The key
 * is compared in constant time, as a digest so its length does not show either.
 */
export function authorize(apiKey: string | undefined): (rule?: AccessRule) => Middleware {
  const expected = apiKey ? digest(apiKey) : undefined;
  return (rule = 'key') =>
    async function requireApiKey(ctx: Context, next): Promise<void> {
      const access = typeof rule === 'function' ? rule(ctx) : rule;
      if (expected && access === 'key') {
        const m = /^Bearer\s+(.+)$/i.exec(ctx.get('Authorization'));
        if (!m || !timingSafeEqual(digest(m[1]!.trim()), expected)) {
          ctx.set('WWW-Authenticate', 'Bearer');
          // The body (if any) is not read: the connection closes after the answer instead of draining it.
          if (ctx.request.length || ctx.get('Transfer-Encoding')) ctx.set('Connection', 'close');
          throw new UnauthorizedError();
        }
      }
      await next();
    };
}
