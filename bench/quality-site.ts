import fs from 'node:fs/promises';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { Marked, type Tokens } from 'marked';
import { pagePath, pageUrl } from '../docindex/sources/website/pages.js';

/**
 * The quality benchmark's `site` phase (bench/quality.ts): a corpus's documentation files, the very ones its folder
 * library indexed, rendered to HTML with `marked` and served on 127.0.0.1 as a documentation site would serve them,
 * so the same questions can be asked of the `website` source (docindex/sources/website/) and of the folder.
 *
 * Each page sits in a Docusaurus-like layout (the most common documentation theme): a navbar, a sidebar listing every
 * page of the library, breadcrumbs, headings with their `#` links, a table of contents, an "Edit this page" footer,
 * previous/next links and the site's footer; all of it is boilerplate the site reader has to drop. The site has a
 * robots.txt and a sitemap.xml but no llms.txt, so every page goes through the HTML-to-Markdown conversion.
 *
 * A library `<name>` is at `/<name>/`: its file `docs/api.md` is `/<name>/docs/api.html`, its root README is
 * `/<name>/index.html` (the start URL). The site reader stores a page at a path derived from its URL
 * (pages.ts `pagePath`): `sourceOf` maps that path back to the file, so a question's labelled answers still apply.
 */
export interface SiteLibrary {
  /** The library's name, its folder on the site. */
  name: string;
  /** The folder its files are read from. */
  root: string;
  /** The documentation files to publish, relative to `root` ('/' separators). */
  files: string[];
}

interface Page {
  lib: string;
  file: string;
  url: string;
  title: string;
  markdown: string;
}

const MARKDOWN = /\.(?:md|markdown|mdx)$/i;
const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\w\s-]/g, '')
    .trim()
    .replace(/\s+/g, '-');

/** Whether a file can be published as a page (Markdown; other documentation kinds are left out and counted). */
export const isPublishable = (file: string) => MARKDOWN.test(file);

/** The URL path of a library's file: its path with `.html`, the root README as the library's index. */
function urlPath(lib: string, file: string): string {
  if (/^readme\.(?:md|markdown|mdx)$/i.test(file)) return `/${lib}/index.html`;
  return `/${lib}/${file.split('/').map(encodeURIComponent).join('/').replace(MARKDOWN, '.html')}`;
}

/** Markdown to the HTML a static site generator makes: heading ids with `#` links, links to `.md` files as `.html`. */
function renderer(lib: string, file: string): Marked {
  const marked = new Marked({ gfm: true });
  marked.use({
    walkTokens(token) {
      if (token.type !== 'link') return;
      const link = token as Tokens.Link;
      if (/^[a-z][\w+.-]*:/i.test(link.href) || link.href.startsWith('#')) return;
      const [target, hash] = link.href.split('#', 2) as [string, string | undefined];
      if (!MARKDOWN.test(target)) return;
      // `/docs/x.md` is from the repository's root, as the package's own documentation writes it.
      const resolved = target.startsWith('/') ? path.posix.normalize(target).slice(1) : path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
      if (resolved.startsWith('..')) return;
      link.href = urlPath(lib, resolved) + (hash ? `#${hash}` : '');
    },
    renderer: {
      heading({ tokens, depth, text }) {
        const id = slug(text);
        const inner = this.parser.parseInline(tokens);
        return `<h${depth} class="anchor anchorWithStickyNavbar" id="${id}">${inner}<a href="#${id}" class="hash-link" aria-label="Direct link to ${escapeHtml(text)}">\u200b</a></h${depth}>\n`;
      },
    },
  });
  return marked;
}

function headings(markdown: string): { depth: number; text: string }[] {
  return new Marked().lexer(markdown).flatMap((t) => (t.type === 'heading' ? [{ depth: (t as Tokens.Heading).depth, text: (t as Tokens.Heading).text }] : []));
}

/** One page in the layout: everything but `.theme-doc-markdown` is boilerplate. */
function layout(page: Page, all: Page[], body: string): string {
  const mine = all.filter((p) => p.lib === page.lib);
  const at = mine.indexOf(page);
  const sidebar = mine.map((p) => `<li class="menu__list-item"><a class="menu__link${p === page ? ' menu__link--active' : ''}" href="${p.url}">${escapeHtml(p.title)}</a></li>`).join('\n');
  const toc = headings(page.markdown)
    .filter((h) => h.depth === 2 || h.depth === 3)
    .map((h) => `<li><a href="#${slug(h.text)}" class="table-of-contents__link toc-highlight">${escapeHtml(h.text.replace(/<[^>]*>/g, ''))}</a></li>`)
    .join('\n');
  const crumbs = page.file.split('/').slice(0, -1);
  const pager = (p: Page | undefined, label: string) => (p ? `<a class="pagination-nav__link" href="${p.url}"><div class="pagination-nav__sublabel">${label}</div><div class="pagination-nav__label">${escapeHtml(p.title)}</div></a>` : '');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(page.title)} | ${page.lib}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="/assets/css/styles.css"><script src="/assets/js/main.js" defer></script></head>
<body class="navigation-with-keyboard">
<div role="region" aria-label="Skip to main content"><a class="skipToContent_fXgn" href="#__docusaurus_skipToContent_fallback">Skip to main content</a></div>
<nav aria-label="Main" class="navbar navbar--fixed-top"><div class="navbar__inner"><div class="navbar__items">
<a class="navbar__brand" href="/${page.lib}/index.html"><b class="navbar__title">${page.lib}</b></a>
<a class="navbar__item navbar__link" href="/${page.lib}/index.html">Docs</a><a class="navbar__item navbar__link" href="/${page.lib}/index.html">API</a><a class="navbar__item navbar__link" href="https://example.invalid/blog">Blog</a></div>
<div class="navbar__items navbar__items--right"><a href="https://example.invalid/${page.lib}" class="navbar__item navbar__link">GitHub</a><div class="navbarSearchContainer"><button type="button" class="DocSearch DocSearch-Button" aria-label="Search"><span class="DocSearch-Button-Placeholder">Search</span></button></div></div></div></nav>
<div id="__docusaurus_skipToContent_fallback" class="main-wrapper mainWrapper">
<div class="docsWrapper"><div class="docRoot">
<aside class="theme-doc-sidebar-container docSidebarContainer"><div class="sidebarViewport"><nav aria-label="Docs sidebar" class="menu thin-scrollbar"><ul class="theme-doc-sidebar-menu menu__list">
${sidebar}
</ul></nav></div></aside>
<main class="docMainContainer"><div class="container padding-top--md padding-bottom--lg"><div class="row"><div class="col docItemCol">
<div class="docItemContainer"><article>
<nav class="theme-doc-breadcrumbs breadcrumbsContainer" aria-label="Breadcrumbs"><ul class="breadcrumbs"><li class="breadcrumbs__item"><a aria-label="Home page" class="breadcrumbs__link" href="/${page.lib}/index.html">Home</a></li>${crumbs.map((c) => `<li class="breadcrumbs__item"><span class="breadcrumbs__link">${escapeHtml(c)}</span></li>`).join('')}<li class="breadcrumbs__item breadcrumbs__item--active"><span class="breadcrumbs__link">${escapeHtml(page.title)}</span></li></ul></nav>
<div class="tocCollapsible theme-doc-toc-mobile tocMobile"><button type="button" class="clean-btn tocCollapsibleButton">On this page</button></div>
<div class="theme-doc-markdown markdown">
${body}
</div>
<footer class="theme-doc-footer docusaurus-mt-lg"><div class="row margin-top--sm theme-doc-footer-edit-meta-row"><div class="col"><a href="https://example.invalid/${page.lib}/edit/main/${page.file}" target="_blank" rel="noopener noreferrer" class="theme-edit-this-page">Edit this page</a></div><div class="col lastUpdated"><span class="theme-last-updated">Last updated on <b><time datetime="2026-01-12T10:00:00.000Z">Jan 12, 2026</time></b></span></div></div></footer>
</article>
<nav class="pagination-nav docusaurus-mt-lg" aria-label="Docs pages">${pager(mine[at - 1], 'Previous')}${pager(mine[at + 1], 'Next')}</nav>
</div></div>
<div class="col col--3"><div class="tableOfContents table-of-contents__left-border thin-scrollbar theme-doc-toc-desktop"><ul class="table-of-contents table-of-contents__left-border">
${toc}
</ul></div></div></div></div></main>
</div></div></div>
<footer class="footer footer--dark"><div class="container container-fluid"><div class="row footer__links"><div class="col footer__col"><div class="footer__title">Docs</div><ul class="footer__items clean-list"><li class="footer__item"><a class="footer__link-item" href="/${page.lib}/index.html">Introduction</a></li></ul></div>
<div class="col footer__col"><div class="footer__title">Community</div><ul class="footer__items clean-list"><li class="footer__item"><a href="https://example.invalid/discord" class="footer__link-item">Discord</a></li></ul></div></div>
<div class="footer__bottom text--center"><div class="footer__copyright">Copyright © 2026 The ${page.lib} contributors. Built with a static site generator.</div></div></div></footer>
<script>window.dataLayer = window.dataLayer || [];</script>
</body></html>`;
}

const titleOf = (markdown: string, file: string) =>
  (/^#{1,2} +(.+?)\s*#*\s*$/m.exec(markdown)?.[1] ?? /<h1[^>]*>(.*?)<\/h1>/i.exec(markdown)?.[1] ?? path.posix.basename(file).replace(MARKDOWN, ''))
    .replace(/<[^>]*>|[*_`]/g, '')
    .trim();

/** A documentation site of several libraries on 127.0.0.1, with the maps between its pages and their files. */
export class DocsSite {
  private readonly stored = new Map<string, string>();
  /** Pages published. */
  readonly pages: number;

  private constructor(
    private readonly server: http.Server,
    readonly origin: string,
    pages: Page[],
  ) {
    for (const p of pages) this.stored.set(pagePath(pageUrl(`${origin}${p.url}`)!.key), `${p.lib}\n${p.file}`);
    this.pages = pages.length;
  }

  static async start(libs: SiteLibrary[]): Promise<DocsSite> {
    const pages: Page[] = [];
    for (const lib of libs) {
      for (const file of lib.files.filter(isPublishable).sort()) {
        const markdown = await fs.readFile(path.join(lib.root, file), 'utf8');
        pages.push({ lib: lib.name, file, url: urlPath(lib.name, file), title: titleOf(markdown, file), markdown });
      }
    }
    const html = new Map(pages.map((p) => [p.url, layout(p, pages, renderer(p.lib, p.file).parse(p.markdown, { async: false }))]));
    let origin = '';
    const server = http.createServer((req, res) => {
      const at = new URL(req.url ?? '/', 'http://x').pathname;
      const send = (status: number, type: string, body: string) => res.writeHead(status, { 'content-type': type }).end(body);
      if (at === '/robots.txt') return send(200, 'text/plain', `User-agent: *\nAllow: /\n\nSitemap: ${origin}/sitemap.xml\n`);
      if (at === '/sitemap.xml') {
        const urls = pages.map((p) => `<url><loc>${escapeHtml(origin + p.url)}</loc><lastmod>2026-01-12</lastmod></url>`).join('\n');
        return send(200, 'application/xml', `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls}\n</urlset>\n`);
      }
      const page = html.get(at);
      return page === undefined ? send(404, 'text/html', '<!doctype html><title>Page not found</title><h1>Page not found</h1>') : send(200, 'text/html; charset=utf-8', page);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    return new DocsSite(server, origin, pages);
  }

  /** Where a library's site starts (what is registered as the website library). */
  startUrl(lib: string): string {
    return `${this.origin}/${lib}/index.html`;
  }

  /** The file a stored page of `lib` was rendered from (undefined for a page that is none of them). */
  sourceOf(lib: string, storedPath: string): string | undefined {
    const [owner, file] = (this.stored.get(storedPath) ?? '\n').split('\n') as [string, string];
    return owner === lib ? file : undefined;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
