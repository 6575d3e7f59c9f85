import robotsModule from 'robots-parser';
import { PermanentError } from '../../../core/errors.js';
import { isAddressRefusal } from '../../../outbound/guard.js';
import { readBytes, request } from '../../../outbound/http.js';
import type { SourceContext } from '../types.js';
import type { CachedPage, PageCache } from './cache.js';
import { inScope, type SiteScope } from './pages.js';

/**
 * How a site is read, one document at a time: every request through the outbound guard, paced (a polite delay
 * between requests, at least the robots.txt Crawl-delay), each within its own time and the run's; robots.txt
 * honoured; redirects followed one hop at a time and only inside the site's scope; only text pages, and only up to
 * a size; a page cached before asked for with its validators, a 304 reusing what was made of it.
 *
 * A page that cannot be had is an outcome, not an error: `skipped` (the site says no: 4xx, robots, a redirect
 * elsewhere, not a text page, too large) or `failed` (it may work another time: 5xx, a timeout, a network error).
 */
export const USER_AGENT = 'Gristmill';

// The package's types declare an ES default export; at run time the CommonJS module is the parser function itself.
const robotsParser: typeof robotsModule.default = typeof robotsModule === 'function' ? robotsModule : robotsModule.default;

export type DocType = 'html' | 'markdown' | 'text' | 'xml';

/** What is kept of a document: made once from its text, reused from the cache on a 304. */
export type Made = Pick<CachedPage, 'title' | 'markdown' | 'links'>;
export type Maker = (text: string, type: DocType, url: string) => Made;

export type Outcome =
  | { kind: 'page'; url: string; made: Made; fresh: boolean }
  | { kind: 'skipped'; reason: string }
  | { kind: 'failed'; reason: string };

/** A document kept as it is (robots.txt, llms.txt, a sitemap). */
export const asText: Maker = (text) => ({ title: '', markdown: text, links: [] });

export interface FetchOptions {
  maxBytes: number;
  make: Maker;
  /** The kinds of document wanted (a page: HTML, Markdown or plain text). */
  types: readonly DocType[];
  /** The start URL: redirects may go anywhere on its host (the scope is then rebased), elsewhere is a job error. */
  start?: boolean;
  /** Robots and scope not checked (robots.txt itself, a sitemap named by robots.txt). */
  unchecked?: boolean;
  /** Takes a redirect's target to be read here; false when it is read anyway (as a page of its own). */
  claimRedirect?: (url: string) => boolean;
}

export interface FetcherSettings {
  pageTimeoutMs: number;
  delayMs: number;
  /** When the whole read must be over (ms since the epoch). */
  deadline: number;
}

const MAX_REDIRECTS = 5;
const MAX_CRAWL_DELAY_MS = 5000;

function docType(contentType: string | null): DocType | null {
  const t = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (t === 'text/html' || t === 'application/xhtml+xml') return 'html';
  if (t === 'text/markdown' || t === 'text/x-markdown') return 'markdown';
  if (t === 'text/plain') return 'text';
  if (t === 'application/xml' || t === 'text/xml') return 'xml';
  return null;
}

export class SiteFetcher {
  scope: SiteScope;
  private robots: ReturnType<typeof robotsParser> | null = null;
  private nextSlot = 0;
  private delayMs: number;

  constructor(
    private readonly ctx: SourceContext,
    private readonly cache: PageCache,
    private readonly settings: FetcherSettings,
    start: SiteScope,
  ) {
    this.scope = start;
    this.delayMs = settings.delayMs;
  }

  /** Reads the origin's robots.txt (none, or unreadable: everything allowed); answers the sitemaps it names. */
  async loadRobots(): Promise<string[]> {
    this.robots = null;
    const url = `${this.scope.origin}/robots.txt`;
    const got = await this.get(url, { maxBytes: 512 * 1024, make: asText, types: ['text'], unchecked: true });
    if (got.kind !== 'page') return [];
    this.robots = robotsParser(url, got.made.markdown);
    const delay = this.robots.getCrawlDelay(USER_AGENT);
    if (delay) this.delayMs = Math.max(this.delayMs, Math.min(delay * 1000, MAX_CRAWL_DELAY_MS));
    return this.robots.getSitemaps();
  }

  allowed(url: string): boolean {
    return this.robots?.isAllowed(url, USER_AGENT) !== false;
  }

  get timeLeft(): boolean {
    return Date.now() < this.settings.deadline;
  }

  /** Waits for this request's turn: request starts are at least the polite delay apart. */
  private async pace(): Promise<void> {
    const now = Date.now();
    const slot = Math.max(now, this.nextSlot);
    this.nextSlot = slot + this.delayMs;
    if (slot > now) await new Promise((r) => setTimeout(r, slot - now));
  }

  async get(url: string, o: FetchOptions): Promise<Outcome> {
    if (!o.unchecked && !this.allowed(url)) return { kind: 'skipped', reason: 'disallowed by robots.txt' };
    const cached = await this.cache.get(url);
    const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept: 'text/html, text/markdown;q=0.9, text/plain;q=0.8' };
    if (cached?.etag) headers['if-none-match'] = cached.etag;
    if (cached?.lastModified) headers['if-modified-since'] = cached.lastModified;
    let hop = url;
    for (let hops = 0; hops <= MAX_REDIRECTS; hops++) {
      if (!this.timeLeft) return { kind: 'failed', reason: "the site's time limit was reached" };
      await this.pace();
      const call = { signal: this.ctx.signal, deadline: Math.min(Date.now() + this.settings.pageTimeoutMs, this.settings.deadline) };
      let res: Response;
      try {
        res = await request(`The page ${hop}`, hop, { headers, redirect: 'manual' }, call, { guard: this.ctx.guard });
      } catch (err) {
        return this.failure(err, o);
      }
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && res.status !== 304 && location) {
        await res.body?.cancel().catch(() => undefined);
        const next = URL.canParse(location, hop) ? new URL(location, hop).href : null;
        if (!next) return { kind: 'skipped', reason: `redirects to an unreadable address (${location.slice(0, 100)})` };
        const refusal = await this.redirectRefusal(hop, next, o);
        if (refusal) return { kind: 'skipped', reason: refusal };
        hop = next;
        continue;
      }
      if (res.status === 304 && cached) {
        await res.body?.cancel().catch(() => undefined);
        return { kind: 'page', url: hop, made: cached, fresh: false };
      }
      return this.read(url, hop, res, o, call);
    }
    return { kind: 'skipped', reason: `more than ${MAX_REDIRECTS} redirects` };
  }

  /** Why a redirect from `from` to `to` is not followed, or null when it is. */
  private async redirectRefusal(from: string, to: string, o: FetchOptions): Promise<string | null> {
    const target = new URL(to);
    if (o.start) {
      if (target.hostname !== new URL(from).hostname || !/^https?:$/.test(target.protocol)) {
        throw new PermanentError(`The site redirects to another host (${target.host}); give that address instead`, 'SITE_REDIRECTED_OFF_ORIGIN');
      }
      return null;
    }
    if (o.unchecked ? target.origin === new URL(from).origin : inScope(to, this.scope)) {
      if (!o.unchecked && !this.allowed(to)) return 'redirects to a page robots.txt disallows';
      return o.claimRedirect && !o.claimRedirect(to) ? `redirects to ${to}, read as a page of its own` : null;
    }
    try {
      await this.ctx.guard.resolve(target.hostname);
    } catch (err) {
      if (isAddressRefusal(err)) return `redirects to an address that is not allowed (${target.host})`;
    }
    return `redirects outside the site (${target.origin}${target.pathname})`;
  }

  private async read(url: string, at: string, res: Response, o: FetchOptions, call: { signal: AbortSignal; deadline: number }): Promise<Outcome> {
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      const reason = `answered ${res.status}`;
      return res.status >= 500 || res.status === 429 || res.status === 408 ? { kind: 'failed', reason } : { kind: 'skipped', reason };
    }
    const type = docType(res.headers.get('content-type'));
    if (!type || !o.types.includes(type)) {
      await res.body?.cancel().catch(() => undefined);
      return { kind: 'skipped', reason: `not a text page (${res.headers.get('content-type') ?? 'no content type'})` };
    }
    let body: Buffer;
    try {
      body = await readBytes(`The page ${at}`, res, call, o.maxBytes);
    } catch (err) {
      return this.failure(err, o);
    }
    if (o.start) this.scope = { origin: new URL(at).origin, prefix: rebase(this.scope, at) };
    let made: Made;
    try {
      made = o.make(new TextDecoder().decode(body), type, at);
    } catch (err) {
      // A page built to break a converter (nesting deep enough to exhaust the stack) is one page lost, not the site.
      return { kind: 'skipped', reason: `could not be converted: ${(err as Error).message}` };
    }
    await this.cache.put({ url, etag: res.headers.get('etag'), lastModified: res.headers.get('last-modified'), ...made });
    return { kind: 'page', url: at, made, fresh: true };
  }

  private failure(err: unknown, o: FetchOptions): Outcome {
    if (this.ctx.signal.aborted) throw err;
    if (o.start && isAddressRefusal(err)) throw err;
    if (err instanceof PermanentError) return { kind: 'skipped', reason: err.message };
    return { kind: 'failed', reason: (err as Error).message };
  }
}

/** The start's folder after its redirects: `/` redirecting to `/en/latest/` makes the site `/en/latest/`. */
function rebase(scope: SiteScope, finalUrl: string): string {
  const p = new URL(finalUrl).pathname;
  const folder = p.endsWith('/') ? p : p.slice(0, p.lastIndexOf('/') + 1);
  return folder.startsWith(scope.prefix) || !p.startsWith(scope.prefix) ? folder : scope.prefix;
}
