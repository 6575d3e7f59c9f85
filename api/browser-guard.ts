import net from 'node:net';
import type { Context, Next } from 'koa';
import type { Config } from '../core/config.js';
import { ForbiddenError, ValidationError } from '../core/errors.js';
import { isApiPath } from './web.js';

/**
 * What a web page in the user's browser may not make Gristmill do. Two checks, before any route (docs/security.md):
 *
 * - **Host.** A DNS-rebinding page reaches 127.0.0.1 under its own name, as a same-origin page. Only IP addresses,
 *   `localhost` (and `*.localhost`), the host of PUBLIC_BASE_URL, HOST when it is a name, and ALLOWED_HOSTS are
 *   answered; anything else is 403 HOST_NOT_ALLOWED. The raw `Host` header is checked, never X-Forwarded-Host,
 *   which a same-origin page could set itself.
 * - **Origin.** While API_KEY is unset, a browser request to the API from another site is 403 ORIGIN_NOT_ALLOWED
 *   unless ALLOWED_ORIGINS lists its origin: a foreign `Origin`, or no Origin but `Sec-Fetch-Site` `cross-site` or
 *   `same-site` (a link, an image, a form from another page). Non-browser clients send neither and are unaffected,
 *   and so are the web interface's own pages. With API_KEY set the key decides instead (a page elsewhere that the
 *   user gave the key to may call the API).
 *
 * Preflight (OPTIONS) is answered by CORS before this runs; refusals still carry the CORS headers, so a page can
 * read why it was refused.
 */
export function browserGuard(config: Config) {
  const anyHost = config.allowedHosts.includes('*');
  const names = new Set<string>([new URL(config.publicBaseUrl).hostname.toLowerCase()]);
  if (!net.isIP(config.host) && config.host !== '0.0.0.0' && config.host !== '::') names.add(config.host.toLowerCase());
  const suffixes = config.allowedHosts.filter((h) => h.startsWith('.'));
  for (const h of config.allowedHosts) if (!h.startsWith('.')) names.add(h);
  const hostAllowed = (hostname: string) =>
    anyHost ||
    net.isIP(hostname.replace(/^\[|\]$/g, '')) !== 0 ||
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    names.has(hostname) ||
    suffixes.some((s) => hostname.endsWith(s) || hostname === s.slice(1));

  const anyOrigin = config.allowedOrigins.includes('*');
  const origins = new Set([new URL(config.publicBaseUrl).origin, ...config.allowedOrigins]);

  return async function guardBrowsers(ctx: Context, next: Next): Promise<void> {
    const rawHost = ctx.req.headers.host;
    let host: string | undefined;
    if (rawHost !== undefined) {
      const url = HOST_HEADER.test(rawHost) ? URL.parse(`http://${rawHost}`) : null;
      if (!url) throw new ValidationError('The Host header is not a host name', 'INVALID_HOST');
      host = url.host;
      const hostname = url.hostname;
      if (!hostAllowed(hostname)) {
        throw new ForbiddenError(`This server does not answer to "${hostname}": add it to ALLOWED_HOSTS (or set PUBLIC_BASE_URL)`, 'HOST_NOT_ALLOWED');
      }
    }
    if (!config.apiKey && !anyOrigin && !(isPageRequest(ctx) && !isApiPath(ctx.path)) && isForeign(ctx, host, origins)) {
      throw new ForbiddenError(
        'A page on another site may not call this API while API_KEY is unset: set API_KEY, or allow the page\'s origin in ALLOWED_ORIGINS',
        'ORIGIN_NOT_ALLOWED',
      );
    }
    await next();
  };
}

/** A name or an address, and a port: nothing else belongs in a Host header. */
const HOST_HEADER = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$/;

/** GET and HEAD: what the web interface's pages and files are asked with. */
const isPageRequest = (ctx: Context) => ctx.method === 'GET' || ctx.method === 'HEAD';

function isForeign(ctx: Context, host: string | undefined, allowed: Set<string>): boolean {
  const origin = ctx.get('Origin');
  if (origin) {
    if (allowed.has(origin)) return false;
    try {
      const u = new URL(origin);
      return !(host && u.host === host && (u.protocol === 'http:' || u.protocol === 'https:'));
    } catch {
      return true; // `null` (sandboxed frames, files) and anything unparsable
    }
  }
  const site = ctx.get('Sec-Fetch-Site');
  return site === 'cross-site' || site === 'same-site';
}
