import { Parser } from 'htmlparser2';

/**
 * What a post's page says about itself: its meta tags (Open Graph, Twitter cards, description), title, JSON-LD
 * blocks, and visible text. Pure; parsed with htmlparser2 (entities decoded, broken markup tolerated).
 */
export interface PageInfo {
  title?: string;
  /** `og:title`, `og:description`, `og:image`, `twitter:description`, `description`, ... (lower-cased keys; first wins). */
  meta: Map<string, string>;
  /** Parsed `application/ld+json` blocks (unparsable ones skipped). */
  jsonLd: unknown[];
  /** The body's visible text, blocks on their own lines, at most `maxText` characters. */
  text: string;
}

const BLOCK = new Set([
  'p', 'div', 'br', 'li', 'ul', 'ol', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'section', 'article', 'header', 'footer', 'tr',
  'table', 'blockquote', 'pre', 'figcaption', 'main', 'aside', 'nav', 'dd', 'dt',
]);
const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head', 'iframe', 'button', 'select', 'option']);

export function readPage(html: string, maxText = 50_000): PageInfo {
  const meta = new Map<string, string>();
  const jsonLd: unknown[] = [];
  let title = '';
  let inTitle = false;
  let script: { ld: boolean; text: string } | undefined;
  let hidden = 0;
  const text: string[] = [];
  let textLength = 0;

  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'meta') {
          const key = (attrs.property ?? attrs.name ?? attrs.itemprop ?? '').trim().toLowerCase();
          const content = attrs.content?.trim();
          if (key && content && !meta.has(key)) meta.set(key, content);
        } else if (name === 'title') {
          inTitle = true;
        } else if (name === 'script') {
          script = { ld: /ld\+json/i.test(attrs.type ?? ''), text: '' };
        }
        if (HIDDEN.has(name)) hidden++;
        if (BLOCK.has(name)) text.push('\n');
      },
      ontext(data) {
        if (script) script.text += data;
        else if (inTitle) title += data;
        else if (!hidden && textLength < maxText) {
          text.push(data);
          textLength += data.length;
        }
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        if (name === 'script' && script) {
          if (script.ld) {
            const parsed = parseJsonLd(script.text);
            if (parsed !== undefined) jsonLd.push(parsed);
          }
          script = undefined;
        }
        if (HIDDEN.has(name) && hidden > 0) hidden--;
        if (BLOCK.has(name)) text.push('\n');
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();

  const cleanTitle = title.replace(/\s+/g, ' ').trim();
  return { ...(cleanTitle && { title: cleanTitle }), meta, jsonLd, text: tidy(text.join('')).slice(0, maxText) };
}

/** Whitespace collapsed within lines, blank lines dropped. */
function tidy(s: string): string {
  return s
    .split('\n')
    .map((l) => l.replace(/[ \t\r\f\v\u00a0]+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
}

function parseJsonLd(raw: string): unknown {
  const body = raw.trim().replace(/^<!--/, '').replace(/-->$/, '').trim();
  if (!body) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    try {
      // Pages often put raw line breaks and tabs inside JSON strings.
      // eslint-disable-next-line no-control-regex
      return JSON.parse(body.replace(/[\u0000-\u001f]+/g, ' '));
    } catch {
      return undefined;
    }
  }
}

const isRecipeType = (t: unknown): boolean =>
  (typeof t === 'string' && /^(?:https?:\/\/schema\.org\/|schema:)?Recipe$/i.test(t)) || (Array.isArray(t) && t.some(isRecipeType));

/**
 * The schema.org Recipes in JSON-LD blocks, in page order: top level, in arrays, in `@graph`, as `mainEntity` or in
 * an `ItemList` (a page with several recipes). A Recipe's own inner nodes are not searched. The same node reached
 * twice counts once.
 */
export function findRecipeNodes(blocks: readonly unknown[]): Record<string, unknown>[] {
  const seen = new Set<unknown>();
  const found: Record<string, unknown>[] = [];
  const visit = (node: unknown, depth: number): void => {
    if (!node || typeof node !== 'object' || seen.has(node) || depth > 8) return;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const n of node) visit(n, depth + 1);
      return;
    }
    const obj = node as Record<string, unknown>;
    if (isRecipeType(obj['@type'])) {
      found.push(obj);
      return;
    }
    for (const key of ['@graph', 'mainEntity', 'mainEntityOfPage', 'itemListElement', 'item']) visit(obj[key], depth + 1);
  };
  for (const b of blocks) visit(b, 0);
  return found;
}

/** The first schema.org Recipe in JSON-LD blocks (findRecipeNodes). */
export function findRecipeNode(blocks: readonly unknown[]): Record<string, unknown> | undefined {
  return findRecipeNodes(blocks)[0];
}
