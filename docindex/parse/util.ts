/**
 * Small string helpers shared by the documentation parsers. Everything here is pure and allocation-light: the parsers
 * run over tens of megabytes per indexing job.
 */

/** Strips a leading byte-order mark and turns CRLF and lone CR line endings into LF. */
export function normalizeNewlines(text: string): string {
  let out = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (out.includes('\r')) out = out.replace(/\r\n?/g, '\n');
  return out;
}

/** Number of non-whitespace characters, counting no further than `limit` (the callers only compare with a threshold). */
export function nonSpaceLength(text: string, limit = Number.POSITIVE_INFINITY): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // space, tab, LF, VT, FF, CR, NBSP
    if (c === 32 || (c >= 9 && c <= 13) || c === 160) continue;
    n++;
    if (n >= limit) return n;
  }
  return n;
}

export function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (!(c === 32 || (c >= 9 && c <= 13) || c === 160)) return false;
  }
  return true;
}

/** Column of the first non-blank character, with tabs advancing to the next multiple of 4. */
export function indentWidth(line: string): number {
  let col = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 32) col++;
    else if (c === 9) col += 4 - (col % 4);
    else return col;
  }
  return col;
}

/** Removes up to `width` columns of leading whitespace (tabs count as up to 4 columns). */
export function stripIndent(line: string, width: number): string {
  if (width <= 0) return line;
  let col = 0;
  let i = 0;
  while (i < line.length && col < width) {
    const c = line.charCodeAt(i);
    if (c === 32) col++;
    else if (c === 9) col += 4 - (col % 4);
    else break;
    i++;
  }
  return i === 0 ? line : line.slice(i);
}

/** Drops leading blank lines and trailing whitespace, keeping the indentation of the first kept line. */
export function trimBlankLines(text: string): string {
  let start = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 10) start = i + 1;
    else if (!(c === 32 || c === 9 || c === 11 || c === 12 || c === 13 || c === 160)) break;
    i++;
  }
  if (i >= text.length) return '';
  let end = text.length;
  while (end > start) {
    const c = text.charCodeAt(end - 1);
    if (c === 32 || (c >= 9 && c <= 13) || c === 160) end--;
    else break;
  }
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** Removes the common leading indentation of all non-blank lines. */
export function dedent(lines: readonly string[]): string[] {
  let min = Number.POSITIVE_INFINITY;
  for (const l of lines) {
    if (isBlank(l)) continue;
    const w = indentWidth(l);
    if (w < min) min = w;
    if (min === 0) return lines.slice();
  }
  if (!Number.isFinite(min)) return lines.slice();
  return lines.map((l) => (isBlank(l) ? '' : stripIndent(l, min)));
}

export function baseName(filePath: string): string {
  const p = filePath.replace(/\\/g, '/');
  const slash = p.lastIndexOf('/');
  return slash >= 0 ? p.slice(slash + 1) : p;
}

/** Lower-case extension without the dot ('' when there is none; `.bashrc` has none). */
export function extension(filePath: string): string {
  const name = baseName(filePath);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

/** Cuts `text` to at most `max` characters at a word boundary, adding an ellipsis when something was cut. */
export function truncateWords(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.lastIndexOf(' ', max - 1);
  if (cut < max * 0.5) cut = max - 1;
  // never split a surrogate pair
  const c = text.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--;
  return text.slice(0, cut).replace(/[\s,;:.-]+$/, '') + '…';
}

/**
 * Plain text of a line of inline Markdown or reStructuredText, for titles and breadcrumbs: links and images keep
 * their text, emphasis and code markers, HTML tags, heading ids (`{#id}`) and rst roles are removed.
 */
export function stripInlineMarkup(text: string): string {
  let s = text.length > 400 ? text.slice(0, 400) : text;
  s = s
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1') // images
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // links
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1') // reference links
    .replace(/`([^`]+)\s*<[^>]*>`_{1,2}/g, '$1') // rst links `text <url>`_
    .replace(/:[\w.+-]+:`(?:[^`<]*<)?([^`>]+)>?`/g, '$1') // rst roles :func:`name` / :ref:`text <target>`
    .replace(/<\/?[A-Za-z][^>]*>/g, '') // inline HTML / JSX
    .replace(/\{#[^}]*\}\s*$/, '') // heading id
    .replace(/`+/g, '')
    .replace(/(\*\*|__)(?=\S)([^*_]*?\S)\1/g, '$2')
    .replace(/(^|[\s(])[*_](?=\S)([^*_]*?\S)[*_](?=$|[\s).,:;!?])/g, '$1$2')
    .replace(/~~(.*?)~~/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  return s;
}
