import type { RawSnippet } from './assemble.js';
import { normalizeLanguage } from './languages.js';
import { splitLargeTables } from './tables.js';
import { indentWidth, isBlank, nonSpaceLength, stripIndent, stripInlineMarkup, truncateWords } from './util.js';
import { foldVariant } from './variants.js';

/**
 * Markdown / MDX: one `info` snippet per section (the text between two headings, without its fenced code blocks)
 * and one `code` snippet per fenced block. A line scanner, not a full CommonMark parser: it knows exactly what the
 * split needs (ATX, setext and `<hN>` headings, ``` and ~~~ fences, list indentation, front matter, HTML comments,
 * MDX import/export and JSX) and treats everything else as text. Lines that show no text are left out of the
 * section text: HTML comments, lines of only tags (`<p align="center">`, `<a><img></a>` sponsor logos, JSX
 * components), lines of only images and linked images (badges), and link reference definitions.
 *
 * A cleaner index: code blocks that differ only by package manager are folded into one snippet with the variants
 * (variants.ts); a code block too small to stand alone (under `inlineBelow` visible characters, `npm i x`) stays in
 * its section's text, where it answers with the prose around it; a section too small to stand alone is carried
 * into the subsection that follows it; and a large table is cut into runs of rows under its header (tables.ts).
 */
export interface MarkdownOptions {
  /** MDX: drop import/export statements, JSX-only lines and `{/* comments *\/}`; fences may be indented freely. */
  mdx: boolean;
  /** Recognise a leading `---` YAML (or `+++` TOML) front matter block. */
  frontMatter: boolean;
  /** Notebooks: lines where a cell starts. A fence or comment still open there is closed first. */
  cellStarts?: ReadonlySet<number>;
  /** Code blocks and sections with fewer visible characters are merged into their section (default 40). */
  inlineBelow?: number;
}

interface Heading {
  level: number;
  text: string;
}

interface Fence {
  char: string;
  len: number;
  indent: number;
  info: string;
  start: number;
  lines: string[];
  title: string | null;
}

/** A closed fence of the current section, emitted (or inlined) when the section ends. */
interface SectionFence {
  title: string | null;
  content: string;
  language: string | null;
  info: string;
  pos: number;
  /** Where it stood in the section's text lines, and how many text lines came before it. */
  at: number;
  textBefore: number;
}

const ATX = /^ {0,3}(#{1,6})(?=[ \t]|$)(.*)$/;
const HTML_HEADING = /^\s*<h([1-6])(?:\s[^>]*)?>(.*?)<\/h\1>\s*$/i;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE_OPEN = /^(\s*)(`{3,}|~{3,})(.*)$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])([ \t]+|$)/;
const MDX_IMPORT_EXPORT = /^(?:import\s+(?:[\w$*{]|['"])|import\s*\{|export\s+(?:const|let|var|function|default|async|class|type|interface|\{|\*))/;
const JSX_OPEN_UNCLOSED = /^<[A-Za-z][\w.:-]*(?:\s[^<>]*)?$/;
/** A link reference definition, `[label]: https://...`: not displayed. */
const LINK_DEFINITION = /^ {0,3}\[[^\]]+\]:\s*\S+(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*$/;

export function parseMarkdown(text: string, opts: MarkdownOptions): RawSnippet[] {
  const lines = text.split('\n');
  const raws: RawSnippet[] = [];
  let i = 0;
  let rootTitle: string | null = null;

  if (opts.frontMatter && lines.length > 1) {
    const first = (lines[0] ?? '').trimEnd();
    if (first === '---' || first === '+++') {
      for (let j = 1; j < lines.length && j < 2000; j++) {
        const l = (lines[j] ?? '').trimEnd();
        if (l === first || (first === '---' && l === '...')) {
          rootTitle = frontMatterTitle(lines, 1, j);
          i = j + 1;
          break;
        }
      }
    }
  }

  const stack: Heading[] = [];
  // What came just before: the code title uses the last prose paragraph when nothing else intervened.
  let lastBlock: 'prose' | 'other' | null = null;
  let lastProse: string[] = [];
  let proseOpen = false; // the next plain line continues lastProse
  let paraLen = 0; // lines in the current plain paragraph (a setext underline needs exactly one)
  let prevBlank = true;
  let listContent = -1; // content column of the list we are in, -1 outside lists
  let fence: Fence | null = null;
  let htmlComment = false;
  let mdxStatement = false;
  let mdxBalance = 0;
  let mdxComment = false;
  let jsxTag = false;

  const breadcrumb = (): string | null => {
    const parts: string[] = [];
    if (rootTitle) parts.push(rootTitle);
    stack.forEach((h, k) => {
      if (!h.text) return;
      if (k === 0 && rootTitle && h.text.toLowerCase() === rootTitle.toLowerCase()) return;
      parts.push(h.text);
    });
    return parts.length ? parts.join(' > ') : null;
  };

  const inlineBelow = opts.inlineBelow ?? 40;
  const newSection = (title: string | null, crumb: string | null, pos: number, level: number) => ({ title, breadcrumb: crumb, pos, level, lines: [] as string[], text: 0, fences: [] as SectionFence[] });
  let section = newSection(rootTitle, rootTitle, 0, 0);
  /** A section too small to stand alone, waiting to see whether a subsection follows to take it in. */
  let carried: ReturnType<typeof newSection> | null = null;
  const pushText = (line: string) => {
    section.lines.push(line);
    section.text++;
  };
  const emitInfo = (s: ReturnType<typeof newSection>) => {
    if (!s.lines.length) return;
    // A large table's rows follow the section's text as snippets of their own (tables.ts).
    const { text, runs } = splitLargeTables(s.lines);
    for (const content of [text.join('\n'), ...runs]) raws.push({ type: 'info', title: s.title, content, language: null, breadcrumb: s.breadcrumb, pos: s.pos, split: 'prose' });
  };
  const flushSection = () => {
    // Small fences join the section's text, unless even together they are too small to stand: then they stay
    // snippets of their own (`npm i x` under a one-word section is still worth finding).
    const small = (f: SectionFence) => nonSpaceLength(f.content, inlineBelow) < inlineBelow;
    const chars = nonSpaceLength(section.lines.join('\n'), inlineBelow) + section.fences.filter(small).reduce((n, f) => n + nonSpaceLength(f.content), 0);
    const inline = section.text > 0 && chars >= inlineBelow;
    // In reverse, so that inlining a fence keeps the positions of those before it.
    for (let k = section.fences.length - 1; k >= 0; k--) {
      const f = section.fences[k]!;
      if (inline && small(f)) {
        const fenced = ['```' + (f.info.split(/\s/)[0] ?? ''), ...f.content.split('\n'), '```'];
        if (f.at > 0 && section.lines[f.at - 1] !== '') fenced.unshift('');
        if (f.at < section.lines.length && section.lines[f.at] !== '') fenced.push('');
        section.lines.splice(f.at, 0, ...fenced);
      } else {
        raws.push({ type: 'code', title: f.title, content: f.content, language: f.language, breadcrumb: section.breadcrumb, pos: f.pos, split: 'code' });
      }
    }
    if (carried) emitInfo(carried);
    carried = null;
    if (section.lines.length && nonSpaceLength(section.lines.join('\n'), inlineBelow) < inlineBelow) carried = section;
    else emitInfo(section);
  };
  const openHeading = (level: number, raw: string, pos: number) => {
    flushSection();
    const headingText = cleanHeading(raw);
    while (stack.length && stack[stack.length - 1]!.level >= level) stack.pop();
    stack.push({ level, text: headingText });
    section = newSection(headingText || section.title, breadcrumb(), pos, level);
    if (!headingText) section.title = stack.slice(0, -1).reverse().find((h) => h.text)?.text ?? rootTitle;
    if (carried && level > carried.level) {
      // The subsection takes in the small text of its parent, which introduces it.
      section.lines.push(...carried.lines);
      if (section.lines[section.lines.length - 1] !== '') section.lines.push('');
      section.text += carried.text;
      carried = null;
    }
    lastBlock = null;
    lastProse = [];
    paraLen = 0;
    proseOpen = false;
    prevBlank = true;
  };

  const emitFence = (f: Fence) => {
    const fence: SectionFence = { title: f.title, content: f.lines.join('\n'), language: normalizeLanguage(f.info), info: f.info, pos: f.start, at: section.lines.length, textBefore: section.text };
    const last = section.fences[section.fences.length - 1];
    const folded = last && last.textBefore === section.text ? foldVariant(last, fence) : null;
    if (folded !== null) last!.content = folded;
    else section.fences.push(fence);
    lastBlock = 'other';
    proseOpen = false;
    paraLen = 0;
  };

  for (; i < lines.length; i++) {
    let line = lines[i]!;
    if (opts.cellStarts?.has(i)) {
      if (fence) emitFence(fence);
      fence = null;
      htmlComment = false;
      prevBlank = true;
    }

    if (fence) {
      const m = /^\s*(`{3,}|~{3,})\s*$/.exec(line);
      if (m && m[1]![0] === fence.char && m[1]!.length >= fence.len) {
        emitFence(fence);
        fence = null;
        prevBlank = false;
      } else fence.lines.push(stripIndent(line, fence.indent));
      continue;
    }

    // Things that are not content at all: HTML comments, and in MDX statements, comments and JSX-only lines.
    if (htmlComment) {
      const end = line.indexOf('-->');
      if (end < 0) continue;
      htmlComment = false;
      line = line.slice(end + 3);
      if (isBlank(line)) continue;
    }
    if (line.includes('<!--')) {
      const kept = stripHtmlComments(line);
      line = kept.text;
      htmlComment = kept.open;
      if (isBlank(line)) continue;
    }
    if (opts.mdx) {
      const t = line.trim();
      if (mdxStatement) {
        mdxBalance += bracketBalance(line);
        if (mdxBalance <= 0 && !/[,({[=]\s*$/.test(t)) mdxStatement = false;
        continue;
      }
      if (mdxComment) {
        if (t.includes('*/}')) mdxComment = false;
        continue;
      }
      if (jsxTag) {
        if (t.endsWith('>')) jsxTag = false;
        continue;
      }
      if (MDX_IMPORT_EXPORT.test(line)) {
        mdxBalance = bracketBalance(line);
        mdxStatement = mdxBalance > 0 || /[,({[=]\s*$/.test(t);
        continue;
      }
      if (t.startsWith('{/*')) {
        mdxComment = !t.includes('*/}');
        continue;
      }
      if (t.startsWith('<') && t.length < 2000 && JSX_OPEN_UNCLOSED.test(t)) {
        jsxTag = true;
        continue;
      }
    }
    // Lines of nothing but tags, images and links around them (JSX components, <p align="center">, badges,
    // sponsor logos) show no text.
    const first = line.charCodeAt(firstNonSpace(line));
    if ((first === 60 /* < */ || first === 91 /* [ */ || first === 33) /* ! */ && showsNoText(line)) continue;

    const blank = isBlank(line);
    if (blank) {
      if (section.lines.length && section.lines[section.lines.length - 1] !== '') section.lines.push('');
      prevBlank = true;
      proseOpen = false;
      paraLen = 0;
      continue;
    }

    const indent = indentWidth(line);
    if (listContent >= 0 && prevBlank && indent < listContent && !LIST_ITEM.test(line)) listContent = -1;

    const fm = FENCE_OPEN.exec(line);
    if (fm && !(fm[2]![0] === '`' && fm[3]!.includes('`'))) {
      const fenceIndent = indentWidth(fm[1]!);
      if (opts.mdx || fenceIndent <= 3 || (listContent >= 0 && fenceIndent <= listContent + 3)) {
        const info = fm[3]!.trim();
        fence = { char: fm[2]![0]!, len: fm[2]!.length, indent: fenceIndent, info, start: i, lines: [], title: codeTitle(info) };
        prevBlank = false;
        continue;
      }
    }

    if (indent <= 3) {
      const atx = ATX.exec(line);
      if (atx) {
        openHeading(atx[1]!.length, atx[2]!.replace(/(?:^|[ \t]+)#+[ \t]*$/, ''), i);
        continue;
      }
      if (paraLen === 1 && !prevBlank) {
        const st = SETEXT.exec(line);
        if (st) {
          const titleLine = section.lines.pop() ?? '';
          section.text--;
          openHeading(st[1]![0] === '=' ? 1 : 2, titleLine, i - 1);
          continue;
        }
      }
    }
    if (line.charCodeAt(indent) === 60 /* < */) {
      const h = HTML_HEADING.exec(line);
      if (h) {
        openHeading(Number(h[1]), h[2]!, i);
        continue;
      }
    }

    // Text. Classify it for the code-title heuristic and setext detection, then keep it.
    const trimmed = line.trim();
    if (LINK_DEFINITION.test(line)) continue;
    pushText(line);
    const li = LIST_ITEM.exec(line);
    if (li) {
      listContent = indentWidth(li[1]!) + li[2]!.length + Math.min(4, Math.max(1, li[3]!.length));
      lastBlock = 'prose';
      lastProse = [line];
      proseOpen = true;
      paraLen = 0;
    } else if (trimmed.startsWith('|') || trimmed.startsWith('<')) {
      lastBlock = 'other';
      proseOpen = false;
      paraLen = 0;
    } else if (indent >= 4 + Math.max(0, listContent) && (prevBlank || lastBlock === 'other') && !proseOpen) {
      lastBlock = 'other'; // indented code: part of the text, but not a sentence
      paraLen = 0;
    } else {
      if (proseOpen && !prevBlank) lastProse.push(line);
      else lastProse = [line];
      lastBlock = 'prose';
      proseOpen = true;
      paraLen = prevBlank || paraLen === 0 ? 1 : paraLen + 1;
      if (trimmed.startsWith('>')) paraLen = 0;
    }
    prevBlank = false;
  }
  if (fence) emitFence(fence); // an unclosed fence runs to the end of the document, as in CommonMark
  flushSection();
  if (carried) emitInfo(carried);
  return raws;

  function codeTitle(info: string): string | null {
    if (lastBlock === 'prose' && lastProse.length) {
      const s = sentenceTitle(lastProse);
      if (s) return s;
    }
    const attr = /\b(?:title|filename)=(?:"([^"]+)"|'([^']+)'|(\S+))/.exec(info);
    if (attr) return (attr[1] ?? attr[2] ?? attr[3] ?? '').trim() || null;
    return section.title ?? null;
  }
}

/**
 * A short title from the prose just before a code block. A paragraph ending in ':' introduces the code with its
 * last sentence ("Install the package with npm:"), unless that sentence is a bare "For example:"; otherwise the
 * first sentence says what the paragraph is about. At most 120 characters, without the final ':' or '.'.
 */
const GENERIC_LEAD_IN = /^(?:for (?:example|instance)|examples?|e\.g|like (?:this|so)|as follows|here(?: i|')s (?:how|an example|the code)|usage|output|result|such as|see below|below|run|code)$/i;

export function sentenceTitle(lines: readonly string[]): string | null {
  let text = lines.map((l) => l.replace(/^\s*(?:>\s*)*(?:(?:[-*+]|\d{1,9}[.)])\s+)?/, '')).join(' ');
  const introducesCode = /[:：]\s*$/.test(text);
  // Only the end (or the start) of a long paragraph matters; stripInlineMarkup looks at 400 characters at most.
  if (text.length > 400) text = introducesCode ? text.slice(-400).replace(/^\S*\s/, '') : text.slice(0, 400);
  text = stripInlineMarkup(text);
  const sentences = text.split(/(?<=[.!?:])\s+(?=[A-Z0-9`"'([])/).filter((x) => x.trim());
  let pick = (introducesCode ? sentences[sentences.length - 1] : sentences[0]) ?? text;
  if (introducesCode && sentences.length > 1 && pick.replace(/[:：.\s]+$/, '').length < 20) pick = sentences[0]!;
  pick = pick.replace(/\s*[:：]+\s*$/, '').replace(/(?<!\.)\.$/, '').trim();
  if (pick.length < 3 || GENERIC_LEAD_IN.test(pick)) return null;
  return truncateWords(pick, 120);
}

function cleanHeading(raw: string): string {
  return truncateWords(stripInlineMarkup(raw), 200);
}

function frontMatterTitle(lines: readonly string[], start: number, end: number): string | null {
  for (let j = start; j < end; j++) {
    const m = /^title\s*[:=]\s*(.*?)\s*$/.exec(lines[j] ?? '');
    if (m) {
      let v = m[1]!;
      if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) v = v.slice(1, -1);
      v = stripInlineMarkup(v);
      return v ? truncateWords(v, 200) : null;
    }
  }
  return null;
}

function showsNoText(line: string): boolean {
  if (line.length > 2000) return false;
  const visible = line
    .replace(/<\/?[A-Za-z][\w.:-]*(?:\s[^<>]*)?\/?>/g, '') // tags, not autolinks like <https://x.dev>
    .replace(/!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])/g, '')
    .replace(/\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])/g, '$1');
  return isBlank(visible);
}

/** The line without its HTML comments, and whether a comment is left open at its end. Linear. */
function stripHtmlComments(line: string): { text: string; open: boolean } {
  let out = '';
  let pos = 0;
  for (;;) {
    const start = line.indexOf('<!--', pos);
    if (start < 0) return { text: out + line.slice(pos), open: false };
    out += line.slice(pos, start);
    const end = line.indexOf('-->', start + 4);
    if (end < 0) return { text: out, open: true };
    pos = end + 3;
  }
}

function firstNonSpace(line: string): number {
  let k = 0;
  while (k < line.length && (line.charCodeAt(k) === 32 || line.charCodeAt(k) === 9)) k++;
  return k;
}

function bracketBalance(line: string): number {
  let b = 0;
  for (let k = 0; k < line.length; k++) {
    const c = line.charCodeAt(k);
    if (c === 40 || c === 91 || c === 123) b++;
    else if (c === 41 || c === 93 || c === 125) b--;
  }
  return b;
}
