import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../core/log.js';
import { splitFull } from '../../../docindex/sources/website/discovery.js';
import { readSite, type SiteLimits } from '../../../docindex/sources/website/crawl.js';
import { PageCache } from '../../../docindex/sources/website/cache.js';
import { pagePath, pageUrl, PageWriter } from '../../../docindex/sources/website/pages.js';
import type { SourceContext } from '../../../docindex/sources/types.js';
import { FakeDocsSite } from '../../../fakes/fake-docs-site.js';
import { outboundGuard } from '../../../outbound/guard.js';
import { readConfig } from '../../../runtime/config.js';
import { internalServer, type RecordingServer } from '../../security/outbound-support.js';

// The site is on 127.0.0.2, which the guard is told to allow (as an operator allows a LAN host); 127.0.0.1 stays
// "internal" and refused, and its server records any request that reaches it.
const { config } = readConfig({ OUTBOUND_ALLOW: '127.0.0.2' });
const LIMITS: Partial<SiteLimits> = { delayMs: 0, pageTimeoutMs: 1500, maxPageBytes: 200_000, maxDepth: 3 };

let site: FakeDocsSite;
let internal: RecordingServer;
let tmp: string;

beforeAll(async () => {
  internal = await internalServer();
  site = await FakeDocsSite.start({ host: '127.0.0.2', internalUrl: `${internal.url}/secret`, hugeBytes: 400_000, slowMs: 5000 });
});
afterAll(async () => {
  await site.close();
  await internal.close();
});
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'site-'));
  Object.assign(site, { llmsTxt: false, llmsFull: false, sitemap: true });
  site.resetCounts();
});
afterEach(async () => {
  expect(internal.hits).toEqual([]);
  await fs.rm(tmp, { recursive: true, force: true });
});

let runs = 0;
async function context(cacheDir?: string): Promise<SourceContext> {
  const workdir = path.join(tmp, `work-${++runs}`);
  await fs.mkdir(workdir);
  return { config, guard: outboundGuard(config), log: createLogger('silent'), signal: new AbortController().signal, workdir, ...(cacheDir && { cacheDir }), heartbeat: () => undefined };
}

/** Every file under `dir`, relative, sorted. */
async function files(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

const read = (ctx: SourceContext, rel: string) => fs.readFile(path.join(ctx.workdir, rel), 'utf8');

describe('readSite: discovery', () => {
  it('prefers llms-full.txt, one file per page it marks, code blocks left whole', async () => {
    site.llmsFull = true;
    site.llmsTxt = true;
    const ctx = await context();
    const out = await readSite(`${site.url}/docs/`, ctx, LIMITS);
    expect(await files(ctx.workdir)).toEqual(['docs/api.md', 'docs/getting-started.md']);
    const api = await read(ctx, 'docs/api.md');
    expect(api).toMatch(/^# API reference\n\nSource: <http:\/\/127\.0\.0\.2:\d+\/docs\/api>\n\n/);
    expect(api).toContain('```python\n# not a heading: inside a code block\n');
    expect(out.counts).toMatchObject({ pages: 2, fetched: 1 });
    expect(site.count('/docs/llms.txt')).toBe(0);
    expect(site.count('/docs/api')).toBe(0);
  });

  it('reads the pages llms.txt links to: Markdown as it is, HTML converted, other sites left alone', async () => {
    site.llmsTxt = true;
    const ctx = await context();
    const out = await readSite(`${site.url}/docs/`, ctx, LIMITS);
    expect(await files(ctx.workdir)).toEqual(['docs.md', 'docs/api.md', 'docs/getting-started.md']);
    expect(await read(ctx, 'docs/getting-started.md')).toContain('```bash\nnpm install fakelib\n```');
    expect(site.count('/docs/getting-started.md', 200)).toBe(1);
    expect(site.count('/docs/guide/config')).toBe(0);
    expect(out.counts).toMatchObject({ pages: 3, fetched: 3, skipped: 0, failed: 0 });
  });

  it('reads the sitemaps robots.txt names (an index, then its sitemap), only under the start folder', async () => {
    const ctx = await context();
    const out = await readSite(`${site.url}/docs/`, ctx, LIMITS);
    expect(await files(ctx.workdir)).toEqual(['docs.md', 'docs/api.md', 'docs/getting-started.md', 'docs/guide/config.md']);
    expect(site.count('/sitemap-docs.xml')).toBe(1);
    expect(site.count('/outside')).toBe(0);
    // Only linked with a query string (the calendar): skipped and counted, never requested.
    expect(site.count('/docs/calendar')).toBe(0);
    expect(out.counts).toMatchObject({ pages: 4, skipped: 1 });
    expect(out.warnings).toContain('1 pages reached only with a query string were skipped');
    expect(out.commit).toMatch(/^site-[0-9a-f]{16}$/);
  });

  it('crawls under the start folder when the site has no list, converting pages as it goes', async () => {
    site.sitemap = false;
    const ctx = await context();
    const out = await readSite(`${site.url}/docs/`, ctx, LIMITS);
    const written = await files(ctx.workdir);
    expect(written).toEqual(expect.arrayContaining(['docs.md', 'docs/api.md', 'docs/getting-started.md', 'docs/guide/config.md']));
    const start = await read(ctx, 'docs.md');
    expect(start).toMatch(/^# FakeLib documentation\n\nSource: <http:\/\/127\.0\.0\.2:\d+\/docs\/>/);
    const api = await read(ctx, 'docs/api.md');
    expect(api).toContain('| Option | Default |');
    expect(api).toContain('```python\ndef bake(flour=500, water=350):');
    expect(await read(ctx, 'docs/guide/config.md')).toContain('```yaml\noven:');
    expect(await read(ctx, 'docs/getting-started.md')).toContain('```typescript\nimport { bake }');
    // Boilerplate gone: menus, sidebar, header, footer, scripts, "edit this page".
    for (const f of written) expect(await read(ctx, f)).not.toMatch(/Copyright|API \(sidebar\)|Edit this page|track\(\)|Search/);
    expect(out.counts?.pages).toBe(written.length);
  });
});

describe('readSite: limits and traps', () => {
  it('honours robots.txt, skips what is not a page of the site, and stops at the depth limit', async () => {
    site.sitemap = false;
    const ctx = await context();
    const out = await readSite(`${site.url}/docs/`, ctx, LIMITS);
    expect(site.count('/docs/private/secret')).toBe(0);
    expect(site.count('/outside')).toBe(0);
    expect(site.count('/docs/calendar')).toBe(0);
    // The archive goes on forever; depth 3 from the start page is as far as the crawl goes.
    expect(await files(path.join(ctx.workdir, 'docs/archive'))).toEqual(['1.md', '1/2.md', '1/2/3.md']);
    expect(site.count('/docs/archive/1/2/3/4')).toBe(0);
    const reasons = out.warnings.join('\n');
    expect(reasons).toMatch(/skipped \S+\/docs\/redirect-away: redirects outside the site/);
    expect(reasons).toMatch(/skipped \S+\/docs\/redirect-internal: redirects to an address that is not allowed/);
    expect(reasons).toMatch(/skipped \S+\/docs\/huge: .*larger than 200000 bytes/);
    expect(reasons).toMatch(/skipped \S+\/docs\/endless: .*larger than 200000 bytes/);
    expect(reasons).toMatch(/failed \S+\/docs\/slow: .*did not answer within/);
    expect(reasons).toMatch(/skipped \S+\/docs\/logo\.png: not a text page \(image\/png\)/);
    expect(reasons).toMatch(/skipped \S+\/docs\/missing: answered 404/);
    // The old link redirects to a page read anyway: one file, not two.
    expect(site.count('/docs/api', 200)).toBe(1);
    expect(out.counts).toMatchObject({ failed: 1 });
  });

  it('reads no more pages than the limit, and writes nothing outside the work folder', async () => {
    site.sitemap = false;
    const ctx = await context();
    const out = await readSite(`${site.url}/docs/`, ctx, { ...LIMITS, maxPages: 4 });
    expect(Number(out.counts?.pages)).toBeLessThanOrEqual(4);
    const pageRequests = [...site.hits.keys()].filter((k) => !k.includes(' ') && k.startsWith('/docs') && !/\.(txt|xml)$/.test(k));
    expect(pageRequests.length).toBeLessThanOrEqual(4);
    expect(out.warnings.some((w) => /links were not read: the page, depth or time limit/.test(w))).toBe(true);
    expect(await fs.readdir(tmp)).toEqual([path.basename(ctx.workdir)]);
  });

  it('stops at the total time limit with the pages read so far', async () => {
    site.sitemap = false;
    const ctx = await context();
    const started = Date.now();
    const out = await readSite(`${site.url}/docs/`, ctx, { ...LIMITS, totalTimeMs: 600, delayMs: 100, concurrency: 1 });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(Number(out.counts?.pages)).toBeGreaterThan(0);
    expect(Number(out.counts?.pages)).toBeLessThan(8);
  });

  it('refuses a start URL at an internal address with the guard error, before any request', async () => {
    const ctx = await context();
    await expect(readSite(`${internal.url}/docs/`, ctx, LIMITS)).rejects.toMatchObject({ code: 'ADDRESS_NOT_ALLOWED' });
  });

  it('fails a start URL that redirects to another host', async () => {
    const ctx = await context();
    await expect(readSite(`${site.url}/docs/redirect-internal`, ctx, LIMITS)).rejects.toMatchObject({ code: 'SITE_REDIRECTED_OFF_ORIGIN' });
  });

  it('fails a site that gives no page', async () => {
    const ctx = await context();
    await expect(readSite(`${site.url}/nothing/here/`, ctx, LIMITS)).rejects.toMatchObject({ code: 'SITE_NO_PAGES' });
  });

  it('does not read a start page robots.txt disallows', async () => {
    const ctx = await context();
    await expect(readSite(`${site.url}/docs/private/secret`, ctx, LIMITS)).rejects.toMatchObject({ code: 'SITE_NO_PAGES', message: /disallowed by robots\.txt/ });
    expect(site.count('/docs/private/secret')).toBe(0);
  });
});

describe('readSite: refresh with the page cache', () => {
  it('asks with the validators: only the changed page is read again, the others answer 304', async () => {
    const cacheDir = path.join(tmp, 'cache');
    const first = await readSite(`${site.url}/docs/`, await context(cacheDir), LIMITS);
    expect(first.counts).toMatchObject({ pages: 4, fetched: 4, notModified: 0 });

    site.resetCounts();
    site.setPage('/docs/api', '<html><body><main><h1>API reference</h1><p>Now with rye flour.</p></main></body></html>');
    const ctx = await context(cacheDir);
    const second = await readSite(`${site.url}/docs/`, ctx, LIMITS);
    expect(site.count('/docs/api', 200)).toBe(1);
    for (const p of ['/docs/', '/docs/getting-started', '/docs/guide/config']) {
      expect(site.count(p, 200)).toBe(0);
      expect(site.count(p, 304)).toBeGreaterThan(0);
    }
    expect(second.counts).toMatchObject({ pages: 4, fetched: 1, notModified: 3 });
    expect(await read(ctx, 'docs/api.md')).toContain('Now with rye flour.');
    expect(await read(ctx, 'docs/getting-started.md')).toContain('```bash\nnpm install fakelib --save-exact\n```');
    expect(second.commit).not.toBe(first.commit);

    const third = await readSite(`${site.url}/docs/`, await context(cacheDir), LIMITS);
    expect(third.counts).toMatchObject({ fetched: 0, notModified: 4 });
    expect(third.commit).toBe(second.commit);
  });

  it('ignores a corrupt cache', async () => {
    const cacheDir = path.join(tmp, 'cache');
    await readSite(`${site.url}/docs/`, await context(cacheDir), LIMITS);
    const dir = path.join(cacheDir, 'site-pages');
    for (const f of await fs.readdir(dir)) await fs.writeFile(path.join(dir, f), '{"url": 12, "trunc');
    site.resetCounts();
    const out = await readSite(`${site.url}/docs/`, await context(cacheDir), LIMITS);
    expect(out.counts).toMatchObject({ pages: 4, fetched: 4, notModified: 0 });
  });
});

describe('page paths and llms-full.txt', () => {
  it('derives safe, bounded paths from URLs', () => {
    const p = (u: string) => pagePath(pageUrl(u)!.key);
    expect(p('https://x.dev/')).toBe('index.md');
    expect(p('https://x.dev/docs/intro.html#part')).toBe('docs/intro.md');
    expect(p('https://x.dev/docs/intro/')).toBe('docs/intro.md');
    expect(p('https://x.dev/docs/%2e%2e/%2e%2e/etc/passwd')).toBe('etc/passwd.md');
    expect(p('https://x.dev/docs/a%2F..%2F..%2Fb/%2e%2e%2e/c')).toBe('docs/a-__-__-b/_/c.md');
    expect(p('https://x.dev/a/../../b')).toBe('b.md');
    expect(p('https://x.dev/.git/config')).toBe('git/config.md');
    expect(p('https://x.dev/v1.2/a.md')).toBe('v1_2/a.md');
    expect(p(`https://x.dev/${'s/'.repeat(40)}${'n'.repeat(300)}`).split('/')).toHaveLength(13);
    expect(p(`https://x.dev/${'n'.repeat(300)}`).length).toBeLessThanOrEqual(83);
    expect(pageUrl('https://x.dev/cal?month=2')).toMatchObject({ href: 'https://x.dev/cal', hadQuery: true });
    expect(pageUrl('mailto:a@b.c')).toBeNull();
  });

  it('splits llms-full.txt by its page marks, else by first-level headings', () => {
    const marked = '---\ntitle: One\nurl: https://x.dev/one\n---\nText one.\n---\ntitle: Two\nsource: https://x.dev/two\n---\n# Two\nText two.';
    expect(splitFull(marked, 'site')).toEqual([
      { title: 'One', url: 'https://x.dev/one', markdown: 'Text one.' },
      { title: 'Two', url: 'https://x.dev/two', markdown: '# Two\nText two.' },
    ]);
    expect(splitFull('Intro words.\n# A\na\n```sh\n# comment\n```\n# B\nb', 'site').map((p) => p.title)).toEqual(['site', 'A', 'B']);
  });

  it('gives pages whose URLs make the same path a name each, whatever the order they come in', async () => {
    const names = async (order: string[]) => {
      const dir = await fs.mkdtemp(path.join(tmp, 'w-'));
      const w = new PageWriter(dir);
      for (const u of order) await w.write(pageUrl(u)!.key, pagePath(pageUrl(u)!.key), u);
      const out: Record<string, string> = {};
      for (const f of await files(dir)) out[await fs.readFile(path.join(dir, f), 'utf8')] = f;
      return out;
    };
    const urls = ['https://x.dev/a', 'https://x.dev/a.html', 'https://x.dev/a.md', 'https://x.dev/b'];
    const one = await names(urls);
    expect(await names([...urls].reverse())).toEqual(one);
    expect(one['https://x.dev/b']).toBe('b.md');
    expect(new Set(Object.values(one)).size).toBe(4);
    expect(one['https://x.dev/a']).toMatch(/^a-[0-9a-f]{8}\.md$/);
  });
});

describe('PageCache', () => {
  it('keeps the entries used most recently within its bounds', async () => {
    const cache = await PageCache.open(tmp, createLogger('silent'), { maxEntries: 2, maxBytes: 1e6 });
    const entry = (url: string) => ({ url, etag: '"e"', lastModified: null, title: url, markdown: 'text', links: [] });
    for (const u of ['https://x.dev/1', 'https://x.dev/2', 'https://x.dev/3']) {
      await cache.put(entry(u));
      await new Promise((r) => setTimeout(r, 20));
    }
    await cache.get('https://x.dev/1'); // used again: now the most recent
    await cache.prune();
    expect(await cache.get('https://x.dev/1')).toMatchObject({ title: 'https://x.dev/1' });
    expect(await cache.get('https://x.dev/2')).toBeUndefined();
    expect(await cache.get('https://x.dev/3')).toMatchObject({ title: 'https://x.dev/3' });
  });
});
