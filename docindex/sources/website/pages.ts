import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * A site's pages as files: which URLs are one page (normalisation), which belong to the site (its scope: the start
 * URL's origin and folder), and where each page is written under the work folder. A page's path comes from its URL
 * path, made safe: only `[A-Za-z0-9._-]` in a name, no name of dots, bounded lengths, so nothing is written outside
 * the folder whatever the URL says.
 */
export interface SiteScope {
  origin: string;
  /** The start URL's folder, ending with `/`: pages are the URLs under it. */
  prefix: string;
}

export interface PageUrl {
  /** What is fetched: the URL without fragment (and without query, unless queries are kept). */
  href: string;
  /** What identifies the page: `href` without a trailing slash, so `/a/` and `/a` are read once. */
  key: string;
  /** The link carried a query string that was dropped. */
  hadQuery: boolean;
}

/** The page a link leads to, or null for what is not a web page (mailto:, javascript:, unparsable). */
export function pageUrl(raw: string, base?: string, keepQuery = false): PageUrl | null {
  let u: URL;
  try {
    u = new URL(raw, base);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  u.hash = '';
  u.username = '';
  u.password = '';
  const hadQuery = u.search !== '' && !keepQuery;
  if (!keepQuery) u.search = '';
  const key = u.pathname.length > 1 && u.pathname.endsWith('/') ? u.href.replace(/\/(?=$|\?)/, '') : u.href;
  return { href: u.href, key, hadQuery };
}

/** The scope of a start URL: its origin, and its path's folder (`/docs/intro.html` -> `/docs/`, `/docs` -> `/docs/`). */
export function scopeOf(start: string): SiteScope {
  const u = new URL(start);
  const p = u.pathname;
  const last = p.slice(p.lastIndexOf('/') + 1);
  const prefix = p.endsWith('/') ? p : last.includes('.') ? p.slice(0, p.lastIndexOf('/') + 1) : `${p}/`;
  return { origin: u.origin, prefix };
}

export function inScope(url: string, scope: SiteScope): boolean {
  const u = new URL(url);
  return u.origin === scope.origin && (u.pathname.startsWith(scope.prefix) || `${u.pathname}/` === scope.prefix);
}

const MAX_SEGMENTS = 12;
const MAX_NAME = 80;
const PAGE_EXTENSION = /\.(?:html?|md|mdx|markdown|txt|php|aspx?|jsp)$/i;

function safeName(segment: string): string {
  let s = segment;
  try {
    s = decodeURIComponent(segment);
  } catch {
    // kept as it is: a malformed escape is only a name here
  }
  s = s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+/, '').replace(/-+$/, '');
  return s.slice(0, MAX_NAME) || '_';
}

/** The file of a page, relative to the work folder: `docs/guide/intro.md` for `/docs/guide/intro.html`. */
export function pagePath(key: string): string {
  const segments = new URL(key).pathname.split('/').filter(Boolean).map(safeName);
  if (!segments.length) return 'index.md';
  const file = segments.pop()!.replace(PAGE_EXTENSION, '') || 'index';
  // Folder names never end in `.md`, so a folder never meets a page file of the same name (`/a.md/b` and `/a.md`).
  const folders = segments.slice(0, MAX_SEGMENTS).map((s) => s.replace(/\./g, '_'));
  return [...folders, `${file.replace(/\.md$/i, '')}.md`].join('/');
}

/** The file of a page with no URL of its own (a part of llms-full.txt): its title as a name. */
export function titlePath(title: string): string {
  return `${safeName(title.toLowerCase()).replace(/\./g, '_')}.md`;
}

/** Front matter's title, and the text without it (a Markdown page from llms.txt may have either). */
function withoutFrontMatter(text: string): { title: string | null; body: string } {
  const m = /^---\r?\n([\s\S]{0,4000}?)\r?\n---\r?\n/.exec(text);
  if (!m) return { title: null, body: text };
  const title = /^title:\s*["']?(.+?)["']?\s*$/m.exec(m[1]!)?.[1] ?? null;
  return { title, body: text.slice(m[0].length) };
}

/**
 * A page's file: a first-level heading (its title), the page's URL (so a snippet leads back to its source), then
 * its Markdown. A page that already starts with its own first-level heading keeps it.
 */
export function pageText(title: string, url: string | null, markdown: string): string {
  const { title: fmTitle, body } = withoutFrontMatter(markdown.replace(/^\uFEFF/, ''));
  const trimmed = body.trim();
  const own = /^# .+/.exec(trimmed)?.[0];
  const heading = own ?? `# ${(fmTitle ?? title).replace(/\s+/g, ' ').trim()}`;
  const rest = own ? trimmed.slice(own.length).trim() : trimmed;
  return `${heading}\n\n${url ? `Source: <${url}>\n\n` : ''}${rest}\n`;
}

const hashOf = (text: string, n: number) => createHash('sha256').update(text).digest('hex').slice(0, n);

/**
 * Writes pages into the work folder, one at a time. Two pages whose URLs give the same path both get a name with a
 * hash of their URL, whichever came first, so the result does not depend on the order of a concurrent crawl.
 */
export class PageWriter {
  private readonly owner = new Map<string, string>();
  private readonly contested = new Set<string>();
  private readonly taken = new Set<string>();
  private readonly digest = new Map<string, string>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly root: string) {}

  get count(): number {
    return this.digest.size;
  }

  has(key: string): boolean {
    return this.digest.has(key);
  }

  /** Writes the page `key` at `rel` (or, on a collision, beside it); answers the path written (null: written before). */
  write(key: string, rel: string, text: string): Promise<string | null> {
    const run = this.chain.then(() => this.place(key, rel, text));
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** A stamp of the pages' contents: the same pages with the same text give the same stamp. */
  stamp(): string {
    const lines = [...this.digest.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, d]) => `${k} ${d}`);
    return `site-${hashOf(lines.join('\n'), 16)}`;
  }

  private async place(key: string, rel: string, text: string): Promise<string | null> {
    if (this.digest.has(key)) return null;
    let target = rel;
    const first = this.owner.get(rel);
    if (first !== undefined || this.contested.has(rel)) {
      if (first !== undefined) {
        const moved = this.unique(rel, first);
        await fs.rename(this.full(rel), this.full(moved));
        this.owner.delete(rel);
        this.taken.delete(rel);
        this.contested.add(rel);
      }
      target = this.unique(rel, key);
    } else if (this.taken.has(rel)) {
      target = this.unique(rel, key);
    } else {
      this.owner.set(rel, key);
    }
    this.taken.add(target);
    const file = this.full(target);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, text);
    this.digest.set(key, hashOf(text, 16));
    return target;
  }

  private unique(rel: string, key: string): string {
    const stem = rel.replace(/\.md$/, '');
    for (let n = 8; ; n += 8) {
      const candidate = `${stem}-${hashOf(key, n)}.md`;
      if (!this.taken.has(candidate) || n >= 64) return candidate;
    }
  }

  /** The absolute path of `rel`, which by construction stays inside the folder (checked all the same). */
  private full(rel: string): string {
    const file = path.resolve(this.root, rel);
    if (!file.startsWith(path.resolve(this.root) + path.sep)) throw new Error(`page path ${rel} leaves the work folder`);
    return file;
  }
}
