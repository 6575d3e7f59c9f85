import { gfm } from '@joplin/turndown-plugin-gfm';
import { DomUtils, parseDocument } from 'htmlparser2';
import TurndownService from 'turndown';

/**
 * A documentation page's HTML as Markdown the parser reads well (docindex/parse/markdown.ts): headings as ATX
 * headings (they become breadcrumbs), code blocks fenced with their language (they become code snippets), tables
 * kept (GFM). The page's main content is taken when it marks one (`<main>`, `[role=main]`, `<article>`), and
 * navigation and boilerplate (menus, sidebars, tables of contents, breadcrumbs, "edit this page", footers) are
 * dropped, so a page's snippets hold what only that page says. Links are made absolute, so they still lead somewhere
 * from the index.
 */
export interface PageMarkdown {
  title: string;
  markdown: string;
  /** Every link of the page, absolute, navigation included (a crawl follows the menus). */
  links: string[];
}

type Document = ReturnType<typeof parseDocument>;
type Element = ReturnType<typeof DomUtils.getElementsByTagName>[number];

const DROPPED_TAGS = new Set(['nav', 'footer', 'aside', 'script', 'style', 'noscript', 'form', 'button', 'svg', 'iframe', 'template', 'select', 'input', 'textarea', 'dialog', 'link', 'meta']);
const DROPPED_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'search']);
/** Class or id words of boilerplate in the common documentation themes (Docusaurus, Sphinx, MkDocs, VitePress...). */
const BOILERPLATE = /(?:^|[-_])(?:sidebar|sidenav|toc|table-of-contents|breadcrumbs?|edit-this-page|edit-page|editlink|pagination|pager|prev-next|navbar|skip-link|skip-to-content|headerlink|hash-link|anchor-link|copy-button|cookie-banner|announcement-bar|feedback)(?:$|[-_])/i;
/** Links kept of one page: more is a generated page (an index of everything), not navigation worth following. */
const MAX_LINKS = 2000;
/** Headings and sections carry anchors made from their own text (`id="pagination"`): only their classes can say boilerplate. */
const ANCHORED = /^(?:h[1-6]|section)$/;
const LANGUAGE_CLASS = /^(?:language|lang|highlight-source|highlight)-([\w+#.-]+)$/i;

function isBoilerplate(el: Element): boolean {
  if (DROPPED_TAGS.has(el.name)) return true;
  // A page header that holds the title is content (`<article><header><h1>`); the site's banner is not.
  if (el.name === 'header') return !DomUtils.getElementsByTagName('h1', el, true, 1).length;
  if (DROPPED_ROLES.has(el.attribs.role ?? '')) return true;
  if (el.attribs['aria-hidden'] === 'true') return true;
  const classes = (el.attribs.class ?? '').split(/\s+/);
  const anchored = ANCHORED.test(el.name) || classes.includes('section'); // older Sphinx: <div class="section" id>
  const words = anchored ? classes : [...classes, el.attribs.id ?? ''];
  return words.some((w) => BOILERPLATE.test(w));
}

/** The language a code block is marked with, on the `<pre>`, its `<code>` or a wrapper (`highlight-source-x`). */
function codeLanguage(pre: Element): string {
  const code = DomUtils.getElementsByTagName('code', pre, true, 1)[0];
  const candidates: (Element | null)[] = [pre, code ?? null, pre.parent as Element | null, (pre.parent?.parent ?? null) as Element | null];
  for (const el of candidates) {
    if (!el?.attribs) continue;
    if (el.attribs['data-language']) return el.attribs['data-language'];
    if (el.attribs['data-lang']) return el.attribs['data-lang'];
    for (const word of (el.attribs.class ?? '').split(/\s+/)) {
      const m = LANGUAGE_CLASS.exec(word);
      if (m && m[1] !== 'default') return m[1]!.toLowerCase();
    }
  }
  return '';
}

function mainContent(doc: Document): Element | Document {
  const find = (test: (el: Element) => boolean) => DomUtils.findOne(test, doc.children, true);
  return find((e) => e.name === 'main') ?? find((e) => e.attribs.role === 'main') ?? find((e) => e.name === 'article') ?? find((e) => e.name === 'body') ?? doc;
}

function absolute(href: string, base: string): string | null {
  try {
    return new URL(href, base).href;
  } catch {
    return null;
  }
}

/** Links made absolute and code blocks' languages written where the conversion reads them. */
function prepare(root: Element | Document, base: string): void {
  for (const el of DomUtils.findAll(() => true, root.children)) {
    for (const attr of ['href', 'src'] as const) {
      const value = el.attribs[attr];
      if (value === undefined || value.startsWith('#')) continue;
      const abs = absolute(value, base);
      if (abs) el.attribs[attr] = abs;
      else delete el.attribs[attr];
    }
    if (el.name === 'pre') el.attribs['data-language'] = codeLanguage(el);
  }
}

function fencedCode(content: string, language: string): string {
  const longest = Math.max(2, ...(content.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `\n\n${fence}${language}\n${content.replace(/\n+$/, '')}\n${fence}\n\n`;
}

let service: TurndownService | undefined;

function turndown(): TurndownService {
  if (service) return service;
  service = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
  service.use(gfm);
  // Added last, so it wins over the plugin's own code rules: the text of the whole block, highlighting spans and all.
  service.addRule('codeBlockWithLanguage', {
    filter: (node) => node.nodeName === 'PRE',
    replacement: (_content, node) => fencedCode(node.textContent ?? '', (node as { getAttribute(name: string): string | null }).getAttribute('data-language') ?? ''),
  });
  return service;
}

const clean = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Elements nested deeper than this make a page no documentation has (and the converters' time grows with it). */
const MAX_NESTING = 512;
/** Elements without content, and elements whose end tag pages often leave out: neither is counted as nesting. */
const UNNESTED = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr', 'p', 'li', 'dt', 'dd', 'tr', 'td', 'th', 'option']);

/** How deep the page's elements nest, estimated from its tags in one linear pass, before any tree is built. */
function nestingDepth(html: string): number {
  let depth = 0;
  let deepest = 0;
  for (const m of html.matchAll(/<(\/?)([a-zA-Z][\w:-]*)[^>]*?(\/?)>/g)) {
    if (m[3] || UNNESTED.has(m[2]!.toLowerCase())) continue;
    depth = m[1] ? Math.max(0, depth - 1) : depth + 1;
    deepest = Math.max(deepest, depth);
  }
  return deepest;
}

/**
 * The page as Markdown: its title, its main content without boilerplate, and all its links. Throws for a page
 * nested too deep to convert in reasonable time (a page made to stall a crawler).
 */
export function htmlToMarkdown(html: string, pageUrl: string): PageMarkdown {
  if (nestingDepth(html) > MAX_NESTING) throw new Error(`its elements nest deeper than ${MAX_NESTING}`);
  const doc = parseDocument(html);
  const base = absolute(DomUtils.getElementsByTagName('base', doc, true, 1)[0]?.attribs.href ?? '', pageUrl) ?? pageUrl;
  const links = DomUtils.getElementsByTagName('a', doc, true)
    .map((a) => a.attribs.href)
    .filter((href): href is string => !!href && !href.startsWith('#'))
    .map((href) => absolute(href, base))
    .filter((href): href is string => href !== null);
  const main = mainContent(doc);
  for (const el of DomUtils.findAll(isBoilerplate, main.children)) DomUtils.removeElement(el);
  prepare(main, base);
  const h1 = DomUtils.getElementsByTagName('h1', main, true, 1)[0];
  const titleTag = DomUtils.getElementsByTagName('title', doc, true, 1)[0];
  const title = clean(h1 ? DomUtils.textContent(h1) : titleTag ? DomUtils.textContent(titleTag) : '') || fallbackTitle(pageUrl);
  const inner = 'children' in main ? DomUtils.getInnerHTML(main) : '';
  const markdown = turndown().turndown(inner).trim();
  return { title, markdown, links: [...new Set(links)].slice(0, MAX_LINKS) };
}

/** A title for a page that has none: the last segment of its path. */
export function fallbackTitle(pageUrl: string): string {
  const segments = new URL(pageUrl).pathname.split('/').filter(Boolean);
  const last = segments.at(-1)?.replace(/\.\w+$/, '') ?? '';
  return decodeURIComponent(last).replace(/[-_]+/g, ' ').trim() || new URL(pageUrl).hostname;
}
