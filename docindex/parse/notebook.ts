import type { RawSnippet } from './assemble.js';
import { normalizeLanguage } from './languages.js';
import { parseMarkdown } from './markdown.js';

/**
 * Jupyter notebooks (nbformat 4, and 3's `worksheets`): the cells are laid out as one Markdown document, markdown
 * cells as they are and code cells as fences in the notebook's language, so breadcrumbs continue across cells and a
 * code cell gets its title from the heading or sentence before it. Outputs and raw cells are ignored. A fence left
 * open by a markdown cell is closed where the next cell starts, and code cells get a fence longer than any backtick
 * run inside them, so no cell can swallow the next one. Invalid JSON yields no snippets.
 */
export function parseNotebook(text: string, inlineBelow?: number): RawSnippet[] {
  let nb: unknown;
  try {
    nb = JSON.parse(text);
  } catch {
    return [];
  }
  if (!isObject(nb)) return [];
  const meta = isObject(nb.metadata) ? nb.metadata : {};
  const language = notebookLanguage(meta);
  let cells: unknown[] = [];
  if (Array.isArray(nb.cells)) cells = nb.cells;
  else if (Array.isArray(nb.worksheets) && isObject(nb.worksheets[0]) && Array.isArray(nb.worksheets[0].cells)) cells = nb.worksheets[0].cells;

  const parts: string[] = [];
  const cellStarts = new Set<number>();
  let line = 0;
  const push = (part: string) => {
    cellStarts.add(line);
    parts.push(part);
    line += part.split('\n').length + 1; // parts are joined with a blank line
  };
  for (const cell of cells) {
    if (!isObject(cell)) continue;
    const source = cellSource(cell.source ?? cell.input);
    if (!source.trim()) continue;
    if (cell.cell_type === 'markdown') push(source);
    else if (cell.cell_type === 'code') {
      const fence = '`'.repeat(Math.max(3, longestBacktickRun(source) + 1));
      push(`${fence}${language}\n${source.replace(/\n+$/, '')}\n${fence}`);
    } else if (cell.cell_type === 'heading' && typeof cell.level === 'number') {
      // nbformat 3 heading cells
      push(`${'#'.repeat(Math.min(6, Math.max(1, Math.floor(cell.level))))} ${source.trim()}`);
    }
  }
  return parseMarkdown(parts.join('\n\n'), { mdx: false, frontMatter: false, cellStarts, inlineBelow });
}

function notebookLanguage(meta: Record<string, unknown>): string {
  const kernel = isObject(meta.kernelspec) ? meta.kernelspec : {};
  const info = isObject(meta.language_info) ? meta.language_info : {};
  const candidates = [kernel.language, info.name, meta.language];
  for (const c of candidates) {
    if (typeof c === 'string') {
      const n = normalizeLanguage(c);
      if (n) return n;
    }
  }
  return 'python';
}

function cellSource(src: unknown): string {
  if (typeof src === 'string') return src.replace(/\r\n?/g, '\n');
  if (Array.isArray(src)) return src.filter((s): s is string => typeof s === 'string').join('').replace(/\r\n?/g, '\n');
  return '';
}

function longestBacktickRun(s: string): number {
  let best = 0;
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) === 96) {
      run++;
      if (run > best) best = run;
    } else run = 0;
  }
  return best;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
