import { isCommandLanguage } from './languages.js';
import { countTokensWithin } from './tokens.js';
import { nonSpaceLength, trimBlankLines } from './util.js';
import { boundaryPriorities, codePriorities, prosePriorities, splitIntoWindows, type TextWindow } from './window.js';

export type SnippetType = 'code' | 'info';

export interface ParsedSnippet {
  type: SnippetType;
  /** code: the nearest heading, the sentence before the block or the symbol name; info: the section heading. */
  title: string | null;
  /** code: the code itself (no fences); info: the section text (Markdown kept). */
  content: string;
  /** code: normalised language (ts, tsx, js, python, go, rust, java, bash, json, ...); info: null. */
  language: string | null;
  /** Heading path ("Getting Started > Installation"), or for source files the path then the symbol. */
  breadcrumb: string | null;
  /** o200k_base tokens of `content`. */
  tokenCount: number;
  /** 0..n-1 in file order. */
  ordinal: number;
}

export interface ParseOptions {
  /** Snippets above this many tokens are split into windows. Default 1200 (at least 16). */
  maxTokens?: number;
  /** Overlap between consecutive windows of a split snippet. Default 100 (at most half of maxTokens). */
  overlapTokens?: number;
  /**
   * Fragments with fewer non-whitespace characters are skipped. Default 40. This is the threshold of info snippets;
   * code snippets use half of it (20), and shell commands 15% of it (6) so that `npm i zod` survives.
   */
  minChars?: number;
}

export interface ResolvedOptions {
  maxTokens: number;
  overlapTokens: number;
  minChars: number;
}

export function resolveOptions(options: ParseOptions | undefined): ResolvedOptions {
  const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) ? Math.floor(v) : d);
  const maxTokens = Math.max(16, num(options?.maxTokens, 1200));
  const overlapTokens = Math.min(Math.floor(maxTokens / 2), Math.max(0, num(options?.overlapTokens, 100)));
  const minChars = Math.max(0, num(options?.minChars, 40));
  return { maxTokens, overlapTokens, minChars };
}

/** How an oversized snippet is split: prose at paragraphs, code at blank lines, or at the given member lines. */
export type SplitMode = 'prose' | 'code' | { boundaries: number[] };

/** A snippet as a parser found it, before the size cap, the tiny-fragment filter and numbering. */
export interface RawSnippet {
  type: SnippetType;
  title: string | null;
  content: string;
  language: string | null;
  breadcrumb: string | null;
  /** Sort key: position (line) in the file; ties keep emission order. */
  pos: number;
  split: SplitMode;
}

function minCharsFor(type: SnippetType, language: string | null, opts: ResolvedOptions): number {
  const base = opts.minChars;
  const min = type === 'info' ? base : isCommandLanguage(language) ? Math.ceil(base * 0.15) : Math.ceil(base / 2);
  return Math.max(1, min); // whitespace-only is always skipped
}

/** Sorts, filters, caps and numbers the raw snippets of one file. Each final snippet is tokenized once. */
export function assemble(raws: RawSnippet[], opts: ResolvedOptions): ParsedSnippet[] {
  const ordered = raws.map((r, i) => ({ r, i })).sort((a, b) => a.r.pos - b.r.pos || a.i - b.i);
  const out: ParsedSnippet[] = [];
  for (const { r } of ordered) {
    const content = trimBlankLines(r.content);
    const min = minCharsFor(r.type, r.language, opts);
    if (nonSpaceLength(content, min) < min) continue;
    const within = countTokensWithin(content, opts.maxTokens);
    if (within !== false) {
      out.push({ type: r.type, title: r.title, content, language: r.language, breadcrumb: r.breadcrumb, tokenCount: within, ordinal: 0 });
      continue;
    }
    const windows = splitSnippet(content, r, opts).filter((w) => nonSpaceLength(w.text, min) >= min);
    windows.forEach((w, k) => {
      const title = r.title !== null && windows.length > 1 ? `${r.title} (part ${k + 1}/${windows.length})` : r.title;
      out.push({ type: r.type, title, content: w.text, language: r.language, breadcrumb: r.breadcrumb, tokenCount: w.tokens, ordinal: 0 });
    });
  }
  out.forEach((s, i) => (s.ordinal = i));
  return out;
}

function splitSnippet(content: string, r: RawSnippet, opts: ResolvedOptions): TextWindow[] {
  const base = { maxTokens: opts.maxTokens, overlapTokens: opts.overlapTokens };
  if (r.split === 'prose') return splitIntoWindows(content, { ...base, priorities: prosePriorities });
  if (r.split === 'code') return splitIntoWindows(content, { ...base, priorities: codePriorities });
  // Member boundaries: pack whole members (a window at least 30% full ends at one); a window that ends at a
  // member boundary does not overlap the next, a repeated method would only add noise.
  // The boundaries index the raw content's lines; trimming only removed leading blank lines, so shift them.
  const shift = leadingBlankLines(r.content);
  const boundaries = r.split.boundaries.map((b) => b - shift);
  return splitIntoWindows(content, { ...base, priorities: boundaryPriorities(boundaries), strongMinFill: 0.3, overlapAfterStrong: false });
}

function leadingBlankLines(text: string): number {
  let lines = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) lines++;
    else if (!(c === 32 || c === 9 || c === 13 || c === 11 || c === 12 || c === 160)) break;
  }
  return lines;
}
