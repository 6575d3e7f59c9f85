import type { RawSnippet } from './assemble.js';
import { normalizeLanguage } from './languages.js';
import { sentenceTitle } from './markdown.js';
import { dedent, indentWidth, isBlank, stripInlineMarkup, truncateWords } from './util.js';

/**
 * reStructuredText: sections from underlined (or over- and underlined) titles, levels assigned in order of first
 * appearance of each adornment style as docutils does; `.. code-block::` / `.. code::` / `.. sourcecode::`,
 * doctest-like directives, `::` literal blocks and `>>>` doctest blocks become code snippets. Comments, hyperlink
 * targets, `.. toctree::` and `.. literalinclude::` are dropped; other directives (note, warning, ...) stay as text.
 */

const ADORNMENT = /^([!-/:-@[-`{-~])\1{2,}\s*$/; // one punctuation character repeated, at least 3 times
const DIRECTIVE = /^(\s*)\.\.\s+([\w:-]+)::(?:\s+(.*?))?\s*$/;
const CODE_DIRECTIVES = new Set(['code-block', 'code', 'sourcecode']);
const PYTHON_DIRECTIVES = new Set(['ipython', 'doctest', 'testcode', 'testsetup', 'jupyter-execute']);
const DROPPED_DIRECTIVES = new Set(['toctree', 'literalinclude', 'include', 'raw', 'only', 'contents', 'meta', 'tabularcolumns']);

interface Heading {
  level: number;
  text: string;
}

export function parseRst(text: string): RawSnippet[] {
  const lines = text.split('\n');
  const raws: RawSnippet[] = [];
  const styles: string[] = [];
  const stack: Heading[] = [];
  let highlight: string | null = null;
  let section = { title: null as string | null, breadcrumb: null as string | null, pos: 0, lines: [] as string[] };
  let lastProse: string[] = [];
  let lastBlock: 'prose' | 'other' | null = null;
  let prevBlank = true;

  const flush = () => {
    if (section.lines.length) {
      raws.push({ type: 'info', title: section.title, content: section.lines.join('\n'), language: null, breadcrumb: section.breadcrumb, pos: section.pos, split: 'prose' });
    }
  };
  const openSection = (style: string, raw: string, pos: number) => {
    flush();
    let level = styles.indexOf(style);
    if (level < 0) {
      styles.push(style);
      level = styles.length - 1;
    }
    const title = truncateWords(stripInlineMarkup(raw.trim()), 200);
    while (stack.length && stack[stack.length - 1]!.level >= level) stack.pop();
    stack.push({ level, text: title });
    const crumbs = stack.map((h) => h.text).filter(Boolean);
    section = { title: title || null, breadcrumb: crumbs.length ? crumbs.join(' > ') : null, pos, lines: [] };
    lastProse = [];
    lastBlock = null;
    prevBlank = true;
  };
  const emitCode = (body: string[], language: string | null, title: string | null, pos: number) => {
    raws.push({ type: 'code', title: title ?? section.title, content: dedent(body).join('\n'), language, breadcrumb: section.breadcrumb, pos, split: 'code' });
    lastBlock = 'other';
  };
  /** Lines after `start` that are blank or indented deeper than `indent`; returns the index after the block. */
  const blockEnd = (start: number, indent: number): number => {
    let j = start;
    while (j < lines.length) {
      const l = lines[j]!;
      if (!isBlank(l) && indentWidth(l) <= indent) break;
      j++;
    }
    while (j > start && isBlank(lines[j - 1]!)) j--;
    return j;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const next = lines[i + 1];

    if (isBlank(line)) {
      if (section.lines.length && section.lines[section.lines.length - 1] !== '') section.lines.push('');
      prevBlank = true;
      continue;
    }

    // Over- and underlined title: adornment, title (may be inset), the same adornment.
    const over = ADORNMENT.exec(line);
    if (over && next !== undefined && !isBlank(next) && !ADORNMENT.test(next)) {
      const under = lines[i + 2];
      if (under !== undefined && under.trimEnd() === line.trimEnd()) {
        openSection(`${over[1]}o`, next, i);
        i += 2;
        continue;
      }
    }
    // Underlined title: unindented text after a blank line, then an adornment at least as long (3 minimum).
    if (prevBlank && indentWidth(line) === 0 && next !== undefined && !ADORNMENT.test(line)) {
      const under = ADORNMENT.exec(next);
      if (under && next.trimEnd().length >= Math.min(line.trimEnd().length, 3) && !line.startsWith('.. ')) {
        openSection(`${under[1]}u`, line, i);
        i += 1;
        continue;
      }
    }

    const indent = indentWidth(line);
    const d = DIRECTIVE.exec(line);
    if (d) {
      const name = d[2]!.toLowerCase();
      const arg = d[3] ?? '';
      if (name === 'highlight') {
        highlight = normalizeLanguage(arg);
        i = blockEnd(i + 1, indent) - 1;
        continue;
      }
      if (CODE_DIRECTIVES.has(name) || PYTHON_DIRECTIVES.has(name)) {
        const end = blockEnd(i + 1, indent);
        let j = i + 1;
        let caption: string | null = null;
        // Options (":caption: x", ":linenos:") come first, before a blank line.
        while (j < end && /^\s+:[\w-]+:/.test(lines[j]!)) {
          const c = /^\s+:caption:\s*(.+)$/.exec(lines[j]!);
          if (c) caption = stripInlineMarkup(c[1]!);
          j++;
        }
        const language = PYTHON_DIRECTIVES.has(name) ? 'python' : normalizeLanguage(arg) ?? highlight;
        const title = caption ?? (lastBlock === 'prose' ? sentenceTitle(lastProse) : null);
        emitCode(lines.slice(j, end), language, title, i);
        i = end - 1;
        prevBlank = false;
        continue;
      }
      if (DROPPED_DIRECTIVES.has(name)) {
        i = blockEnd(i + 1, indent) - 1;
        continue;
      }
      // Other directives (note, warning, image, autoclass, ...) are kept as text.
    } else if (/^\s*\.\.(?:\s|$)/.test(line) && !/^\s*\.\.\s+(?:\[|\|)/.test(line)) {
      // Comment or hyperlink target (`.. _label:`), with its indented body.
      i = blockEnd(i + 1, indent) - 1;
      continue;
    }

    // Doctest block: a paragraph starting with ">>> ".
    if (/^\s*>>>\s/.test(line) && prevBlank) {
      let j = i;
      while (j < lines.length && !isBlank(lines[j]!)) j++;
      const title = lastBlock === 'prose' ? sentenceTitle(lastProse) : null;
      emitCode(lines.slice(i, j), 'python', title, i);
      i = j - 1;
      prevBlank = false;
      continue;
    }

    // Paragraph text; a line ending in "::" introduces a literal block.
    const trimmed = line.trimEnd();
    if (trimmed.endsWith('::') && !d) {
      const lead = trimmed.slice(0, -2);
      const shown = lead.trim().length === 0 ? '' : /\s$/.test(lead) ? lead.trimEnd() : `${lead}:`;
      if (shown) section.lines.push(shown);
      if (prevBlank || lastBlock !== 'prose') lastProse = [];
      if (shown.trim()) lastProse.push(shown);
      let j = i + 1;
      while (j < lines.length && isBlank(lines[j]!)) j++;
      if (j < lines.length && indentWidth(lines[j]!) > indent) {
        const end = blockEnd(j, indent);
        const title = lastProse.length ? sentenceTitle(lastProse) : null;
        emitCode(lines.slice(j, end), highlight, title, i);
        i = end - 1;
        prevBlank = false;
        continue;
      }
      prevBlank = false;
      continue;
    }

    section.lines.push(line);
    if (d || /^\s*[|+]/.test(line) || /^\s*=+(\s+=+)+\s*$/.test(line)) {
      lastBlock = 'other'; // directive lines and tables are not sentences
    } else {
      if (prevBlank || lastBlock !== 'prose') lastProse = [];
      lastProse.push(line);
      lastBlock = 'prose';
    }
    prevBlank = false;
  }
  flush();
  return raws;
}
