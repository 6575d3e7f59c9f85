import type { RawSnippet } from './assemble.js';
import { lineOutline } from './code/line-outline.js';
import type { Declaration, Outline } from './code/outline.js';
import { treeOutline } from './code/tree-outline.js';
import { sourceLanguage } from './languages.js';
import { baseName, indentWidth, isBlank, nonSpaceLength } from './util.js';

/**
 * Source files: one code snippet per top-level declaration, with the comments, doc comments, decorators,
 * annotations and attributes directly above it, and the comments standing alone above those (withLoneComments);
 * top-level statements after a declaration stay with it. The declarations come from the language's tree-sitter
 * grammar when it is loaded (code/tree-outline.ts), else from the line lexer (code/line-outline.ts). Runs of small
 * declarations are grouped. What precedes the first declaration (the "preamble") is kept only when it holds more
 * than imports and a license header, e.g. a module docstring or package comment. An oversized declaration is later
 * split at its member or statement boundaries. Languages without either are cut into windows of lines.
 */

/** Declarations smaller than this (non-whitespace characters) may be grouped with their neighbours... */
const SMALL_DECL = 150;
/** ...into groups of at most this size. */
const GROUP_LIMIT = 800;

interface Segment {
  titles: string[];
  start: number;
  end: number;
  size: number;
  members: number[];
}

export function parseSource(filePath: string, text: string): RawSnippet[] {
  const { language, family } = sourceLanguage(filePath);
  const name = baseName(filePath);
  const whole: RawSnippet[] = [{ type: 'code', title: name, content: text, language, breadcrumb: filePath, pos: 0, split: 'code' }];
  if (family === 'lines') return whole;
  const lines = text.split('\n');
  const outline = treeOutline(language, family, text, lines.length) ?? lineOutline(lines, text, family);
  if (!outline) return whole;

  const raws: RawSnippet[] = [];
  const firstStart = outline.decls.length ? outline.decls[0]!.start : lines.length;
  const preamble = preambleContent(lines, outline, firstStart);
  if (preamble !== null) raws.push({ type: 'code', title: name, content: preamble, language, breadcrumb: filePath, pos: 0, split: 'code' });
  for (const seg of group(lines, withLoneComments(lines, outline))) {
    const title = groupTitle(seg.titles);
    const boundaries = seg.members.filter((b) => b > seg.start && b < seg.end).map((b) => b - seg.start);
    raws.push({
      type: 'code',
      title,
      content: lines.slice(seg.start, seg.end).join('\n'),
      language,
      breadcrumb: `${filePath} > ${title}`,
      pos: seg.start,
      split: boundaries.length ? { boundaries } : 'code',
    });
  }
  return raws;
}

/**
 * Comments standing alone between two declarations, a blank line under them (a JSDoc `@typedef`, a `# --- Helpers`
 * banner), introduce what follows them: each declaration after the first starts at them, instead of leaving them at
 * the end of the one before, which they say nothing about. A comment line indented deeper than the declaration, other
 * than the inside of a `/* *\/` block, is the end of the body above (Python's), and stays there.
 */
function withLoneComments(lines: readonly string[], outline: Outline): Declaration[] {
  return outline.decls.map((d, k) => {
    if (k === 0) return d;
    const indent = indentWidth(lines[d.line]!);
    let top = d.start;
    for (let j = d.start - 1; j > outline.decls[k - 1]!.line; j--) {
      const line = lines[j]!;
      if (isBlank(line)) continue;
      if (!outline.comment[j] || (indentWidth(line) > indent && !line.trimStart().startsWith('*'))) break;
      top = j;
    }
    return top < d.start ? { ...d, start: top } : d;
  });
}

/** One segment per declaration (up to the next one), runs of small ones merged. */
function group(lines: readonly string[], decls: readonly Declaration[]): Segment[] {
  const grouped: Segment[] = [];
  decls.forEach((d, k) => {
    const end = k + 1 < decls.length ? decls[k + 1]!.start : lines.length;
    let size = 0;
    for (let j = d.start; j < end && size < GROUP_LIMIT; j++) size += nonSpaceLength(lines[j]!, GROUP_LIMIT);
    const prev = grouped[grouped.length - 1];
    if (prev && prev.size < GROUP_LIMIT && size < SMALL_DECL && prev.size + size <= GROUP_LIMIT && (prev.titles.length > 1 || prev.size < SMALL_DECL)) {
      prev.titles.push(d.title);
      prev.end = end;
      prev.size += size;
      prev.members.push(d.start, ...d.members);
    } else grouped.push({ titles: [d.title], start: d.start, end, size, members: [...d.members] });
  });
  return grouped;
}

function groupTitle(titles: string[]): string {
  if (titles.length <= 4) return titles.join(', ');
  return `${titles.slice(0, 3).join(', ')} and ${titles.length - 3} more`;
}

/** The preamble without a leading license comment, or null when it holds nothing but imports and comments of that kind. */
function preambleContent(lines: readonly string[], outline: Outline, end: number): string | null {
  const { comment, importish } = outline;
  let from = 0;
  // Skip a shebang, then a leading comment block that is a license header.
  if (from < end && lines[from]!.startsWith('#!')) from++;
  let k = from;
  while (k < end && isBlank(lines[k]!)) k++;
  let c = k;
  while (c < end && comment[c]) c++;
  if (c > k && /copyright|licen[cs]e|spdx-license/i.test(lines.slice(k, c).join('\n'))) from = c;
  let meaningful = 0;
  for (let i = from; i < end && meaningful < 40; i++) {
    if (importish[i]) continue;
    meaningful += nonSpaceLength(lines[i]!, 40);
  }
  if (meaningful < 40) return null;
  return lines.slice(from, end).join('\n');
}
