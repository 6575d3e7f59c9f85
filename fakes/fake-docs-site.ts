/**
 * A documentation site as a real HTTP server on 127.0.0.1 (or another loopback address, so a test can allow it in
 * the outbound guard and keep 127.0.0.1 refused), for the `website` source (docindex/sources/website/):
 *
 * - robots.txt (a Disallow of /docs/private/ and a Sitemap line), a sitemap index and its sitemap, and optionally
 *   /docs/llms.txt and /docs/llms-full.txt (switched by `llmsTxt` / `llmsFull`);
 * - HTML pages under /docs/ with navigation, header and footer boilerplate, code blocks marked with their language
 *   in the common ways, and a table; ETag and Last-Modified on every page, 304 to a conditional request that
 *   matches; `setPage` changes a page at run time (new ETag); every request counted by path and status;
 * - traps linked from the start page: an endless calendar (`/docs/calendar?month=N`), an endless archive
 *   (`/docs/archive/1/2/3/...`), a redirect off the site, a redirect to an internal address (`internalUrl`), a
 *   huge page, a page that never ends, a slow page, a picture, a missing page, a disallowed page, a page outside /docs/.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';

export interface FakeDocsSiteOptions {
  /** The loopback address to listen on (127.0.0.1 unless a test keeps that one "internal"). */
  host?: string;
  /** Where /docs/redirect-internal sends clients: an address the guard refuses. */
  internalUrl?: string;
  /** The size of /docs/huge. */
  hugeBytes?: number;
  /** How long /docs/slow waits before answering. */
  slowMs?: number;
}

const LAST_MODIFIED = 'Mon, 02 Nov 2026 10:00:00 GMT';

function layout(title: string, body: string): string {
  return `<!doctype html><html><head><title>${title} | FakeLib</title><link rel="stylesheet" href="/style.css"></head><body>
<header class="site-header"><a href="/docs/">FakeLib</a> <button>Search</button></header>
<nav class="menu"><a href="/docs/getting-started">Getting started</a> <a href="/docs/api">API</a> <a href="/docs/guide/config">Configuration</a></nav>
<div class="theme-doc-sidebar-container"><ul><li><a href="/docs/api">API (sidebar)</a></li></ul></div>
<main><article>${body}<a class="edit-this-page" href="https://example.invalid/edit">Edit this page</a></article></main>
<footer>Copyright FakeLib. <a href="/docs/privacy">Privacy</a></footer><script>track()</script></body></html>`;
}

const PAGES: Record<string, string> = {
  '/docs/': layout(
    'FakeLib',
    `<h1>FakeLib documentation</h1><p>FakeLib turns flour into bread. Start with <a href="getting-started">Getting started</a>.</p>
<ul><li><a href="/docs/calendar?month=1">Events</a></li><li><a href="/docs/archive/1">Archive</a></li>
<li><a href="/docs/redirect-away">Old docs</a></li><li><a href="/docs/redirect-internal">Status</a></li>
<li><a href="/docs/redirect-inside">API (old link)</a></li><li><a href="/docs/huge">Huge</a></li><li><a href="/docs/endless">Endless</a></li>
<li><a href="/docs/slow">Slow</a></li><li><a href="/docs/logo.png">Logo</a></li><li><a href="/docs/missing">Missing</a></li>
<li><a href="/docs/private/secret">Private</a></li><li><a href="/outside">Outside</a></li><li><a href="mailto:a@b.c">Mail</a></li></ul>`,
  ),
  '/docs/getting-started': layout(
    'Getting started',
    `<h1>Getting started</h1><p>Install FakeLib with your package manager and knead the dough until it is smooth.</p>
<h2>Install</h2><pre><code class="language-bash">npm install fakelib --save-exact</code></pre>
<h2>First loaf</h2><p>Bake a loaf with the default oven settings, as the example shows.</p>
<pre class="lang-typescript"><code>import { bake } from 'fakelib';
const loaf = await bake({ flour: 500, water: 350 });</code></pre>`,
  ),
  '/docs/api': layout(
    'API',
    `<h1>API reference</h1><p>The functions FakeLib exports, and the options each takes.</p>
<h2>Options</h2><table><thead><tr><th>Option</th><th>Default</th></tr></thead><tbody><tr><td>flour</td><td>500</td></tr><tr><td>water</td><td>350</td></tr></tbody></table>
<h2>Python</h2><div class="highlight-source-python"><pre><span class="k">def</span> bake(flour=500, water=350):
    return Loaf(flour, water)</pre></div>`,
  ),
  '/docs/guide/config': layout(
    'Configuration',
    `<h1>Configuration</h1><p>FakeLib reads its oven settings from a YAML file beside the recipe.</p>
<pre data-language="yaml"><code>oven:
  temperature: 230
  steam: true</code></pre>`,
  ),
  '/docs/private/secret': layout('Secret', '<h1>Secret</h1><p>robots.txt says no.</p>'),
  '/outside': layout('Outside', '<h1>Outside</h1><p>Not under /docs/.</p>'),
};

const LLMS_TXT = `# FakeLib

> FakeLib turns flour into bread.

## Docs

- [Getting started](/docs/getting-started.md): install and first loaf
- [API](/docs/api): the reference
- [Elsewhere](https://example.invalid/other): not this site
`;

const llmsFull = (base: string) => `# Getting started
Source: ${base}/docs/getting-started

Install FakeLib with your package manager and knead the dough until it is smooth.

\`\`\`bash
npm install fakelib --save-exact
\`\`\`

# API reference
Source: ${base}/docs/api

The functions FakeLib exports, and the options each takes.

\`\`\`python
# not a heading: inside a code block
def bake(flour=500, water=350): ...
\`\`\`
`;

const MARKDOWN: Record<string, string> = {
  '/docs/getting-started.md': '# Getting started\n\nInstall FakeLib with your package manager and knead the dough.\n\n```bash\nnpm install fakelib\n```\n',
};

export class FakeDocsSite {
  url = '';
  /** Which lists the site has. */
  llmsTxt = false;
  llmsFull = false;
  sitemap = true;
  /** Requests by path (with its query), and by path and status (`/docs/api 304`). */
  readonly hits = new Map<string, number>();
  private readonly pages = new Map(Object.entries(PAGES));
  private readonly versions = new Map<string, number>();
  private server: http.Server | undefined;

  private constructor(private readonly o: FakeDocsSiteOptions) {}

  static async start(o: FakeDocsSiteOptions = {}): Promise<FakeDocsSite> {
    const s = new FakeDocsSite(o);
    s.server = http.createServer((req, res) => s.serve(req, res));
    await new Promise<void>((r) => s.server!.listen(0, o.host ?? '127.0.0.1', r));
    s.url = `http://${o.host ?? '127.0.0.1'}:${(s.server.address() as net.AddressInfo).port}`;
    return s;
  }

  /** Changes a page's content (its ETag and Last-Modified change with it). */
  setPage(path: string, html: string): void {
    this.pages.set(path, html);
    this.versions.set(path, (this.versions.get(path) ?? 0) + 1);
  }

  /** How many requests a path got (with `status`: only those answered with it). */
  count(path: string, status?: number): number {
    return this.hits.get(status === undefined ? path : `${path} ${status}`) ?? 0;
  }

  /** Forgets the requests counted so far. */
  resetCounts(): void {
    this.hits.clear();
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private record(path: string, status: number): void {
    this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
    this.hits.set(`${path} ${status}`, (this.hits.get(`${path} ${status}`) ?? 0) + 1);
  }

  /** A document with validators: 304 when the client's match. */
  private document(req: http.IncomingMessage, res: http.ServerResponse, key: string, type: string, body: string): void {
    const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
    const version = this.versions.get(key) ?? 0;
    const lastModified = new Date(Date.parse(LAST_MODIFIED) + version * 86_400_000).toUTCString();
    const headers = { etag, 'last-modified': lastModified, 'content-type': type };
    const match = req.headers['if-none-match'] ? req.headers['if-none-match'] === etag : req.headers['if-modified-since'] === lastModified;
    this.reply(res, key, match ? 304 : 200, headers, match ? '' : body);
  }

  private reply(res: http.ServerResponse, key: string, status: number, headers: http.OutgoingHttpHeaders, body = ''): void {
    this.record(key, status);
    res.writeHead(status, headers).end(body);
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const u = new URL(req.url ?? '/', this.url);
    const key = u.pathname + u.search;
    if (this.trap(u, key, res)) return;
    const html = this.pages.get(u.pathname);
    if (html !== undefined) return this.document(req, res, u.pathname, 'text/html; charset=utf-8', html);
    if (MARKDOWN[u.pathname] && this.llmsTxt) return this.document(req, res, u.pathname, 'text/markdown', MARKDOWN[u.pathname]!);
    const list = this.list(u.pathname);
    if (list) return this.document(req, res, u.pathname, list[0], list[1]);
    this.reply(res, key, 404, { 'content-type': 'text/html' }, '<h1>Not found</h1>');
  }

  /** robots.txt, the sitemaps and the llms lists, when the site has them. */
  private list(path: string): [string, string] | null {
    if (path === '/robots.txt') return ['text/plain', `User-agent: *\nDisallow: /docs/private/\n${this.sitemap ? `Sitemap: ${this.url}/sitemap.xml\n` : ''}`];
    if (path === '/sitemap.xml' && this.sitemap) {
      return ['application/xml', `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${this.url}/sitemap-docs.xml</loc></sitemap></sitemapindex>`];
    }
    if (path === '/sitemap-docs.xml' && this.sitemap) {
      const locs = ['/docs/', '/docs/getting-started', '/docs/api', '/docs/guide/config', '/docs/calendar?month=3&amp;view=list', '/outside'];
      return ['application/xml', `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((l) => `<url><loc>${this.url}${l}</loc></url>`).join('')}</urlset>`];
    }
    if (path === '/docs/llms.txt' && this.llmsTxt) return ['text/plain', LLMS_TXT];
    if (path === '/docs/llms-full.txt' && this.llmsFull) return ['text/plain', llmsFull(this.url)];
    return null;
  }

  /** The pages that are there to catch a crawler; true when `u` was one of them. */
  private trap(u: URL, key: string, res: http.ServerResponse): boolean {
    const p = u.pathname;
    if (p === '/docs/calendar') {
      const month = Number(u.searchParams.get('month') ?? 0);
      this.reply(res, key, 200, { 'content-type': 'text/html' }, layout('Events', `<h1>Events ${month}</h1><a href="/docs/calendar?month=${month + 1}">Next month</a>`));
    } else if (p.startsWith('/docs/archive/')) {
      const depth = p.split('/').length - 3;
      this.reply(res, key, 200, { 'content-type': 'text/html' }, layout('Archive', `<h1>Archive ${depth}</h1><a href="${p}/${depth + 1}">Older</a>`));
    } else if (p === '/docs/redirect-away') {
      this.reply(res, key, 302, { location: 'http://127.0.0.2:9/docs/elsewhere' });
    } else if (p === '/docs/redirect-internal') {
      this.reply(res, key, 302, { location: this.o.internalUrl ?? 'http://169.254.169.254/latest/meta-data/' });
    } else if (p === '/docs/redirect-inside') {
      this.reply(res, key, 301, { location: '/docs/api' });
    } else if (p === '/docs/huge') {
      this.reply(res, key, 200, { 'content-type': 'text/html' }, `<html><body><main><h1>Huge</h1><p>${'x'.repeat(this.o.hugeBytes ?? 6 * 1024 * 1024)}</p></main></body></html>`);
    } else if (p === '/docs/endless') {
      this.endless(res, key);
    } else if (p === '/docs/slow') {
      const timer = setTimeout(() => this.reply(res, key, 200, { 'content-type': 'text/html' }, layout('Slow', '<h1>Slow</h1>')), this.o.slowMs ?? 10_000);
      res.on('close', () => clearTimeout(timer));
    } else if (p === '/docs/logo.png') {
      this.reply(res, key, 200, { 'content-type': 'image/png' }, 'PNG');
    } else return false;
    return true;
  }

  /** A page that never ends: 64 KB every 10 ms until the client hangs up. */
  private endless(res: http.ServerResponse, key: string): void {
    this.record(key, 200);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.write('<html><body><main><h1>Endless</h1><p>');
    const chunk = 'y'.repeat(64 * 1024);
    const timer = setInterval(() => res.write(chunk), 10);
    res.on('close', () => clearInterval(timer));
  }
}
