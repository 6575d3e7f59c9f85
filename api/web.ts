import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Context, Next } from 'koa';
import { UnavailableError, ValidationError } from '../core/errors.js';
import type { Logger } from '../core/log.js';

/**
 * Serves the web interface at `/` (GET and HEAD only; never for /api, /mcp or /healthz, which stay the API's).
 *
 * The folder `../web/` next to this module is the sources when the API runs from them (web/src: `npm start`, the
 * tests), and then the app is bundled in memory once, on the first request, with no build step; from dist/ it is
 * dist/web, written by `npm run build`, read once. Either way every file is served from memory by its exact URL
 * path, so no request can reach another file on disk. A page path (no extension) gets index.html: the app routes.
 */
export const WEB_DIR = fileURLToPath(new URL('../web/', import.meta.url));

/**
 * Paths that belong to the API, whatever the app has; tested on the decoded path without case or doubled slashes
 * too, so that `/API/v1/libs` or `//api/v1/libs` (which reach no route) answer 404 rather than the app's page.
 */
const API_PATHS = /^\/(api|mcp|healthz)(?![\w-])/i;

/** Whether a path is the API's rather than the web interface's (also in the spellings no route matches). */
export const isApiPath = (p: string): boolean => API_PATHS.test(p) || API_PATHS.test(p.replace(/\/{2,}/g, '/'));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/**
 * The page's own script and styles only. Pictures may come from anywhere (recipe thumbnails are on the post's site);
 * recordings play from blob: URLs.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  'img-src * data: blob:',
  "media-src 'self' blob:",
  "worker-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
  cacheControl: string;
}

type WebFiles = Map<string, Uint8Array>;

const exists = (p: string) => fs.stat(p).then(() => true, () => false);

async function readBuilt(dir: string): Promise<WebFiles> {
  const files: WebFiles = new Map();
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files.set(`/${path.relative(dir, full).split(path.sep).join('/')}`, await fs.readFile(full));
  }
  return files;
}

async function loadFiles(dir: string, log: Logger): Promise<WebFiles> {
  if (await exists(path.join(dir, 'src', 'main.tsx'))) {
    const t0 = Date.now();
    // A computed specifier: the builder (and esbuild) stay out of dist/ and out of production.
    const builder = (await import(pathToFileURL(path.join(dir, 'build.ts')).href)) as { buildWebApp(): Promise<WebFiles> };
    const files = await builder.buildWebApp();
    log.info('built the web interface from its sources', { ms: Date.now() - t0 });
    return files;
  }
  if (await exists(path.join(dir, 'index.html'))) return readBuilt(dir);
  log.warn('the web interface is not built', { dir });
  throw new UnavailableError('The web interface is not built: run `npm run build`', 'WEB_INTERFACE_NOT_BUILT');
}

function toAsset(urlPath: string, body: Uint8Array): Asset {
  const buf = Buffer.from(body);
  return {
    body: buf,
    type: TYPES[path.posix.extname(urlPath)] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(buf).digest('base64url').slice(0, 27)}"`,
    // Hashed names never change content; everything else is checked on each load (ETag answers 304).
    cacheControl: urlPath.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
  };
}

/** One load per folder and process, shared by every app in it; a failed one is tried again on the next request. */
const loaded = new Map<string, Promise<Map<string, Asset>>>();

function assetsOf(dir: string, log: Logger): Promise<Map<string, Asset>> {
  let p = loaded.get(dir);
  if (!p) {
    p = loadFiles(dir, log).then((files) => new Map([...files].map(([urlPath, body]) => [urlPath, toAsset(urlPath, body)])));
    p.catch(() => loaded.delete(dir));
    loaded.set(dir, p);
  }
  return p;
}

/** The request's path, decoded; a path that tries to climb out (`..`, backslashes, NUL) is refused. */
function requestedPath(ctx: Context): string {
  let p: string;
  try {
    p = decodeURIComponent(ctx.path);
  } catch {
    throw new ValidationError('The path is not valid percent-encoding', 'INVALID_PATH');
  }
  if (p.includes('\0') || p.includes('\\') || p.split('/').includes('..')) throw new ValidationError('The path may not leave the web interface', 'INVALID_PATH');
  return p;
}

export function webApp(log: Logger, dir = WEB_DIR) {
  return async function serveWebApp(ctx: Context, next: Next): Promise<void> {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || API_PATHS.test(ctx.path)) return next();
    const p = requestedPath(ctx);
    if (isApiPath(p)) return next();
    const assets = await assetsOf(dir, log);
    const isPage = !path.posix.basename(p).includes('.');
    const asset = assets.get(p === '/' ? '/index.html' : p) ?? (isPage ? assets.get('/index.html') : undefined);
    if (!asset) return next(); // the error handler answers 404 as for any unknown path
    ctx.status = 200;
    ctx.type = asset.type;
    ctx.set('Cache-Control', asset.cacheControl);
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (asset.type.startsWith('text/html')) {
      ctx.set('Content-Security-Policy', CSP);
      ctx.set('Referrer-Policy', 'strict-origin-when-cross-origin');
    }
    ctx.etag = asset.etag;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.body = asset.body;
  };
}
