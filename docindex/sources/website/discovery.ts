/**
 * What a site says about its own pages, read before any crawl: llms-full.txt (every page's Markdown in one file),
 * llms.txt (a Markdown list of links to the pages) and sitemaps (XML lists of URLs, or of further sitemaps).
 */

/** One page of llms-full.txt: its title, its URL when the file says it, its Markdown. */
export interface FullPage {
  title: string;
  url: string | null;
  markdown: string;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const H1 = /^# +(.+?)\s*#*\s*$/;
const RULE = /^-{3,}\s*$/;
const META = /^(title|url|source|path)\s*:\s*["']?(.+?)["']?\s*$/i;
const SOURCE_LINE = /^(?:source|url):\s*<?(https?:\/\/\S+?)>?\s*$/i;

/** A block of `key: value` lines between two rules (`---`) at line `i` (title, url, source), or null. */
function metaBlock(lines: string[], i: number): { end: number; title?: string; url?: string } | null {
  if (!RULE.test(lines[i] ?? '')) return null;
  const meta: { end: number; title?: string; url?: string } = { end: i };
  for (let j = i + 1; j < Math.min(lines.length, i + 8); j++) {
    if (RULE.test(lines[j]!)) {
      if (!meta.title && !meta.url) return null;
      meta.end = j + 1;
      return meta;
    }
    const m = META.exec(lines[j]!);
    if (!m) return null;
    if (m[1]!.toLowerCase() === 'title') meta.title = m[2]!;
    else if (/^https?:\/\//.test(m[2]!)) meta.url = m[2]!;
  }
  return null;
}

/**
 * llms-full.txt as pages. Where the file marks its pages (a `---` block with `title:` and `url:`/`source:`, or a
 * first-level heading followed by a `Source: <url>` line), one page per mark; else one page per first-level heading
 * (outside code blocks). Text before the first page is a page of its own when it says anything.
 */
export function splitFull(text: string, fallbackTitle: string): FullPage[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const pages: FullPage[] = [];
  let current: FullPage & { lines: string[] } = { title: fallbackTitle, url: null, markdown: '', lines: [] };
  const close = () => {
    const markdown = current.lines.join('\n').trim();
    if (markdown) pages.push({ title: current.title, url: current.url, markdown });
  };
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const f = FENCE.exec(line)?.[1];
    if (fence) {
      if (f && f[0] === fence[0] && f.length >= fence.length) fence = null;
      current.lines.push(line);
      continue;
    }
    if (f) fence = f;
    const meta = metaBlock(lines, i);
    const h1 = meta ? null : H1.exec(line);
    // The heading right after a `---` block is the heading of the page that block opened.
    const opened = h1 && current.url && !current.lines.some((l) => l.trim());
    if (meta || (h1 && !opened)) {
      close();
      current = { title: meta?.title ?? h1![1]!, url: meta ? (meta.url ?? null) : null, markdown: '', lines: [] };
      if (meta) {
        i = meta.end - 1;
        continue;
      }
      // `# Title` then (within a blank line or two) `Source: https://...`: the page's URL.
      for (let j = i + 1; j < Math.min(lines.length, i + 4) && !current.url; j++) current.url = SOURCE_LINE.exec(lines[j]!)?.[1] ?? null;
    }
    if (!SOURCE_LINE.test(line) || !current.url) current.lines.push(line);
  }
  close();
  return pages;
}

/** The links of llms.txt (`- [Title](url): notes`), absolute, in order, each once. */
export function llmsLinks(text: string, base: string): { title: string; url: string }[] {
  const seen = new Set<string>();
  const links: { title: string; url: string }[] = [];
  for (const m of text.matchAll(/\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    let url: string;
    try {
      url = new URL(m[2]!, base).href;
    } catch {
      continue;
    }
    if (seen.has(url)) continue;
    seen.add(url);
    links.push({ title: m[1]!.trim(), url });
  }
  return links;
}

const decodeXml = (s: string) =>
  s
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&')
    .trim();

/** A sitemap's URLs (`<urlset>`), or the sitemaps a sitemap index lists (`<sitemapindex>`). */
export function readSitemap(xml: string): { urls: string[]; sitemaps: string[] } {
  const locs = [...xml.matchAll(/<(?:\w+:)?loc>([\s\S]*?)<\/(?:\w+:)?loc>/g)].map((m) => decodeXml(m[1]!));
  return /<(?:\w+:)?sitemapindex[\s>]/.test(xml) ? { urls: [], sitemaps: locs } : { urls: locs, sitemaps: [] };
}
