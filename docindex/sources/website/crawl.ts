import { PermanentError, RecoverableError } from '../../../core/errors.js';
import type { Checkout, SourceContext } from '../types.js';
import { PageCache } from './cache.js';
import { llmsLinks, readSitemap, splitFull } from './discovery.js';
import { asText, type DocType, type Made, type Maker, type Outcome, SiteFetcher } from './fetcher.js';
import { fallbackTitle, htmlToMarkdown } from './html-to-markdown.js';
import { inScope, type PageUrl, pagePath, pageText, pageUrl, PageWriter, scopeOf, titlePath } from './pages.js';

/**
 * A documentation site read into a folder of Markdown files, one per page, that the pipeline indexes like a
 * repository's (docindex/pipeline.ts). The site's own lists are preferred to a crawl, in this order: llms-full.txt
 * (every page in one file), llms.txt (links to the pages), the sitemaps (robots.txt's and /sitemap.xml), and last a
 * breadth-first crawl of the links under the start URL. Everything is bounded (pages, depth, bytes, time), and every
 * request is the fetcher's (fetcher.ts: the outbound guard, robots.txt, redirects, the page cache).
 */
export interface SiteLimits {
  /** Pages read at most (each URL tried counts, whatever came of it). */
  maxPages: number;
  /** Links followed from the start page at most (a crawl only). */
  maxDepth: number;
  /** A page larger than this is skipped. */
  maxPageBytes: number;
  /** llms-full.txt, llms.txt or a sitemap larger than this is not used. */
  maxListBytes: number;
  /** The whole read: when it is up, the pages read so far are the result. */
  totalTimeMs: number;
  pageTimeoutMs: number;
  concurrency: number;
  /** Between two requests to the site (robots.txt's Crawl-delay, when longer, wins). */
  delayMs: number;
  /** Query strings are dropped (calendars, sorting, sessions); a page reached only by one is skipped. */
  keepQuery: boolean;
}

export const DEFAULT_SITE_LIMITS: SiteLimits = {
  maxPages: 1000,
  maxDepth: 8,
  maxPageBytes: 5 * 1024 * 1024,
  maxListBytes: 50 * 1024 * 1024,
  totalTimeMs: 30 * 60_000,
  pageTimeoutMs: 30_000,
  concurrency: 4,
  delayMs: 200,
  keepQuery: false,
};

const PAGE_TYPES: readonly DocType[] = ['html', 'markdown', 'text'];
const LIST_TYPES: readonly DocType[] = ['markdown', 'text'];
const MAX_SITEMAPS = 50;
const MAX_URL_LENGTH = 2000;
const MAX_WARNINGS = 20;
/** Pages seen only with a query string that are remembered (to be counted); a calendar must not fill the memory. */
const MAX_QUERY_ONLY = 10_000;

/** A page's Markdown: HTML converted, Markdown and text as they are. */
const makePage: Maker = (text, type, url) => {
  if (type === 'html') return htmlToMarkdown(text, url);
  return { title: /^# +(.+)$/m.exec(text)?.[1]?.trim() ?? fallbackTitle(url), markdown: text, links: [] };
};

async function eachLimit<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

export interface SiteCounts {
  /** Files written. */
  pages: number;
  /** Documents read in full (200), and answered 304 (what the cache held reused). */
  fetched: number;
  notModified: number;
  /** Pages the site said no to (4xx, robots.txt, a redirect elsewhere, too large, not text, a query string). */
  skipped: number;
  /** Pages that may work another time (5xx, timeouts). */
  failed: number;
}

/** One read of a site: what was claimed, written and counted. */
class SiteRun {
  readonly counts: SiteCounts = { pages: 0, fetched: 0, notModified: 0, skipped: 0, failed: 0 };
  readonly writer: PageWriter;
  private readonly claimed = new Set<string>();
  private readonly queryOnly = new Set<string>();
  private readonly notes: string[] = [];
  private unread = 0;
  private startPage: { key: string; outcome: Outcome } | null = null;

  constructor(
    readonly ctx: SourceContext,
    readonly limits: SiteLimits,
    readonly fetcher: SiteFetcher,
  ) {
    this.writer = new PageWriter(ctx.workdir);
  }

  /** Reads the start URL first: its redirects decide the site's scope (fetcher.ts), and the crawl starts from it. */
  async readStart(url: PageUrl): Promise<void> {
    const outcome = await this.fetcher.get(url.href, { maxBytes: this.limits.maxPageBytes, make: makePage, types: PAGE_TYPES, start: true });
    this.startPage = { key: url.key, outcome };
    this.claimed.add(url.key);
  }

  /** Takes `p` to be read, unless it was, it is outside the site, or the limits are reached. */
  claim(p: PageUrl | null): p is PageUrl {
    if (!p || !inScope(p.href, this.fetcher.scope) || this.claimed.has(p.key)) return false;
    if (p.hadQuery) {
      if (this.queryOnly.size < MAX_QUERY_ONLY) this.queryOnly.add(p.key);
      return false;
    }
    if (this.claimed.size >= this.limits.maxPages || p.href.length > MAX_URL_LENGTH || !this.fetcher.timeLeft) {
      this.unread++;
      return false;
    }
    this.claimed.add(p.key);
    return true;
  }

  /** Reads a page and writes its file; answers what was made of it (its links, for a crawl). */
  async readPage(p: PageUrl): Promise<Made | null> {
    const claimRedirect = (to: string) => {
      const q = pageUrl(to, undefined, this.limits.keepQuery);
      if (!q || this.claimed.has(q.key)) return false;
      this.claimed.add(q.key);
      return true;
    };
    const outcome = this.startPage?.key === p.key ? this.startPage.outcome : await this.fetcher.get(p.href, { maxBytes: this.limits.maxPageBytes, make: makePage, types: PAGE_TYPES, claimRedirect });
    if (outcome.kind !== 'page') {
      this.note(p.href, outcome);
      return null;
    }
    this.counts[outcome.fresh ? 'fetched' : 'notModified']++;
    const final = pageUrl(outcome.url)!;
    if (final.key !== p.key && !inScope(final.href, this.fetcher.scope)) return outcome.made;
    await this.write(final.key, pagePath(final.key), pageText(outcome.made.title, final.href, outcome.made.markdown));
    return outcome.made;
  }

  async write(key: string, rel: string, text: string): Promise<void> {
    if ((await this.writer.write(key, rel, text)) === null) return;
    this.counts.pages++;
    this.ctx.heartbeat(`${this.counts.pages} pages read`);
  }

  note(url: string, outcome: Extract<Outcome, { kind: 'skipped' | 'failed' }>): void {
    this.counts[outcome.kind]++;
    this.notes.push(`${outcome.kind} ${url}: ${outcome.reason}`);
  }

  /** Counts and warnings, once the read is over. */
  finish(): { warnings: string[]; counts: SiteCounts } {
    const queryOnly = [...this.queryOnly].filter((k) => !this.claimed.has(k)).length;
    this.counts.skipped += queryOnly;
    const warnings = this.notes.slice(0, MAX_WARNINGS);
    if (this.notes.length > MAX_WARNINGS) warnings.push(`and ${this.notes.length - MAX_WARNINGS} more pages skipped or failed`);
    if (queryOnly) warnings.push(`${queryOnly} pages reached only with a query string were skipped`);
    if (this.unread) warnings.push(`${this.unread} links were not read: the page, depth or time limit was reached`);
    return { warnings, counts: { ...this.counts } };
  }

  /** Reads a list of the site's (llms.txt, a sitemap), at most `maxListBytes`; null when there is none. */
  async readList(url: string, types: readonly DocType[], unchecked = false): Promise<string | null> {
    const got = await this.fetcher.get(url, { maxBytes: this.limits.maxListBytes, make: asText, types, unchecked });
    return got.kind === 'page' ? got.made.markdown : null;
  }
}

/** The places a site's list may be: in the start folder, then at the root. */
function listUrls(run: SiteRun, name: string): string[] {
  const { origin, prefix } = run.fetcher.scope;
  return [...new Set([`${origin}${prefix}${name}`, `${origin}/${name}`])];
}

async function fromLlmsFull(run: SiteRun): Promise<boolean> {
  const { origin, prefix } = run.fetcher.scope;
  // Only the start folder's: at the root it would be the whole site's, not the part asked for.
  const url = `${origin}${prefix}llms-full.txt`;
  const got = await run.fetcher.get(url, { maxBytes: run.limits.maxListBytes, make: asText, types: LIST_TYPES });
  if (got.kind !== 'page') return false;
  const pages = splitFull(got.made.markdown, fallbackTitle(`${origin}${prefix}`)).slice(0, run.limits.maxPages);
  if (!pages.length) return false;
  run.counts[got.fresh ? 'fetched' : 'notModified']++;
  for (const [n, page] of pages.entries()) {
    const own = page.url ? pageUrl(page.url) : null;
    const mine = own && inScope(own.href, run.fetcher.scope) ? own : null;
    await run.write(mine?.key ?? `${url}#${n}`, mine ? pagePath(mine.key) : titlePath(page.title), pageText(page.title, page.url, page.markdown));
  }
  return true;
}

/** Reads the start page and the pages of a list. */
async function readAll(run: SiteRun, start: PageUrl, urls: (PageUrl | null)[]): Promise<void> {
  const wanted = [start, ...urls.filter((p) => run.claim(p))];
  await eachLimit(wanted, run.limits.concurrency, async (p) => void (await run.readPage(p)));
}

async function fromLlms(run: SiteRun, start: PageUrl): Promise<boolean> {
  for (const url of listUrls(run, 'llms.txt')) {
    const text = await run.readList(url, LIST_TYPES);
    if (text === null) continue;
    const links = llmsLinks(text, url).map((l) => pageUrl(l.url, undefined, run.limits.keepQuery));
    if (!links.some((p) => p && inScope(p.href, run.fetcher.scope))) continue;
    await readAll(run, start, links);
    return true;
  }
  return false;
}

async function fromSitemaps(run: SiteRun, start: PageUrl, named: string[]): Promise<boolean> {
  const { origin } = run.fetcher.scope;
  const queue = [...named.filter((u) => URL.canParse(u) && new URL(u).origin === origin), ...listUrls(run, 'sitemap.xml')];
  const seen = new Set<string>();
  const pages: (PageUrl | null)[] = [];
  while (queue.length && seen.size < MAX_SITEMAPS && pages.length < run.limits.maxPages * 2) {
    const url = queue.shift()!;
    if (seen.has(url)) continue;
    seen.add(url);
    const xml = await run.readList(url, ['xml', 'text'], true);
    if (xml === null) continue;
    const found = readSitemap(xml);
    queue.push(...found.sitemaps.filter((u) => URL.canParse(u) && new URL(u).origin === origin));
    pages.push(...found.urls.map((u) => pageUrl(u, undefined, run.limits.keepQuery)));
  }
  if (!pages.some((p) => p && inScope(p.href, run.fetcher.scope))) return false;
  await readAll(run, start, pages);
  return true;
}

/** Breadth-first from the start page, one depth at a time, following links under the start folder. */
async function crawl(run: SiteRun, start: PageUrl): Promise<void> {
  let level: PageUrl[] = [start];
  for (let depth = 0; level.length; depth++) {
    const next: PageUrl[] = [];
    await eachLimit(level, run.limits.concurrency, async (p) => {
      const made = await run.readPage(p);
      if (!made || depth >= run.limits.maxDepth) return;
      for (const link of made.links) {
        const q = pageUrl(link, undefined, run.limits.keepQuery);
        if (run.claim(q)) next.push(q);
      }
    });
    level = next;
  }
}

/**
 * Reads the site at `startUrl` into `ctx.workdir`. The start URL must be one the outbound guard allows
 * (ADDRESS_NOT_ALLOWED), and must not redirect to another host (SITE_REDIRECTED_OFF_ORIGIN). A site that gives no
 * page at all fails: recoverable when some page failed (5xx, timeouts), else SITE_NO_PAGES.
 */
export async function readSite(startUrl: string, ctx: SourceContext, limits: Partial<SiteLimits> = {}): Promise<Checkout> {
  const l = { ...DEFAULT_SITE_LIMITS, ...limits };
  const start = pageUrl(startUrl, undefined, l.keepQuery);
  if (!start) throw new PermanentError(`${startUrl} is not an http(s) URL`, 'SITE_URL_INVALID');
  await ctx.guard.checkUrl(start.href, 'The site');
  const cache = await PageCache.open(ctx.cacheDir, ctx.log);
  const fetcher = new SiteFetcher(ctx, cache, { pageTimeoutMs: l.pageTimeoutMs, delayMs: l.delayMs, deadline: Date.now() + l.totalTimeMs }, scopeOf(start.href));
  const run = new SiteRun(ctx, l, fetcher);
  let sitemaps = await fetcher.loadRobots();
  const origin = fetcher.scope.origin;
  await run.readStart(start);
  if (fetcher.scope.origin !== origin) sitemaps = await fetcher.loadRobots(); // http: redirected to https:
  const used = (await fromLlmsFull(run)) || (await fromLlms(run, start)) || (await fromSitemaps(run, start, sitemaps));
  if (!used) await crawl(run, start);
  await cache.prune();
  const { warnings, counts } = run.finish();
  if (!counts.pages) {
    const why = warnings[0] ?? 'no page was found';
    if (counts.failed) throw new RecoverableError(`The site ${startUrl} gave no page: ${why}`);
    throw new PermanentError(`The site ${startUrl} gave no page: ${why}`, 'SITE_NO_PAGES');
  }
  return { root: ctx.workdir, commit: run.writer.stamp(), warnings, counts: { ...counts } };
}
