import { countTokens } from './tokens.js';
import { trimBlankLines } from './util.js';

/**
 * Splitting of an oversized snippet into windows of at most `maxTokens` tokens.
 *
 * The text is cut into lines (a line too long to fit a window at the sampled density is first cut into pieces,
 * at whitespace when possible). Windows are planned with an estimate of the tokens per character, taken from a
 * sample of the text and then from each window counted so far, packed greedily, and moved back to the best break
 * point: a "strong" break (a paragraph or member start) when that keeps the window at least `strongMinFill` full,
 * else a "weak" one, else the line where the window overflowed. Each window is then tokenized exactly, and planned
 * again with a corrected density in the rare case the estimate was short. The next window starts `overlapTokens`
 * worth of whole lines before the end of the previous one. So the text is tokenized about once, plus a small
 * sample and the overlaps: there is no per-line tokenization and nothing quadratic.
 */
export interface TextWindow {
  text: string;
  tokens: number;
}

/** Priority of breaking before each line: 0 = anywhere, 1 = weak, 2 = strong. */
export type BreakPriorities = (lines: readonly string[]) => Uint8Array;

export interface WindowOptions {
  maxTokens: number;
  overlapTokens: number;
  priorities?: BreakPriorities;
  /** Fraction of maxTokens a window must hold for a strong break to be taken (0 = always take the last one). */
  strongMinFill?: number;
  /** Same for weak breaks. */
  weakMinFill?: number;
  /** Whether a window that ended at a strong break still overlaps the next one (default true). */
  overlapAfterStrong?: boolean;
}

interface Unit {
  text: string;
  prio: number;
}

export function splitIntoWindows(text: string, opts: WindowOptions): TextWindow[] {
  const max = opts.maxTokens;
  const lines = text.split('\n');
  const prios = opts.priorities ? opts.priorities(lines) : new Uint8Array(lines.length);
  const sample = text.length > 2000 ? text.slice(0, 2000) : text;
  let ratio = clampRatio((countTokens(sample) / Math.max(1, sample.length)) * 1.05);
  // Lines that would fill most of a window at the sampled density are cut into pieces first, so that windows
  // over a huge line still pack well.
  const cut = Math.max(16, Math.floor((max * 0.45) / ratio));
  const units: Unit[] = [];
  for (let i = 0; i < lines.length; i++) {
    const t = i < lines.length - 1 ? lines[i] + '\n' : (lines[i] ?? '');
    if (t.length === 0) continue;
    if (t.length <= cut) units.push({ text: t, prio: prios[i] ?? 0 });
    else cutLine(t, cut).forEach((piece, k) => units.push({ text: piece, prio: k === 0 ? (prios[i] ?? 0) : 0 }));
  }
  const n = units.length;

  const strongFill = (opts.strongMinFill ?? 0.5) * max;
  const weakFill = (opts.weakMinFill ?? 0.5) * max;
  const windows: TextWindow[] = [];
  const cum: number[] = []; // characters from s to the end of each unit of the window being planned
  const plan = (s: number): number => {
    let e = s;
    let chars = 0;
    cum.length = 0;
    while (e < n && (e === s || (chars + units[e]!.text.length) * ratio <= max)) {
      chars += units[e]!.text.length;
      cum.push(chars);
      e++;
    }
    return e < n ? chooseBreak(units, cum, s, e, ratio, strongFill, weakFill) : e;
  };
  let s = 0;
  while (s < n) {
    let e = plan(s);
    let windowText = trimBlankLines(joinUnits(units, s, e));
    let tokens = countTokens(windowText);
    // The estimate was short: correct the density and plan again (it only grows, so this ends quickly); after a
    // few rounds keep the share of characters that fits.
    for (let round = 0; tokens > max && e > s + 1; round++) {
      const chars = cum[e - s - 1]!;
      if (round < 3) {
        ratio = clampRatio(Math.max(ratio * 1.1, (tokens / chars) * 1.05));
        e = plan(s);
      } else {
        const target = ((chars * max) / tokens) * 0.95;
        let k = e - 1;
        while (k > s + 1 && cum[k - s - 1]! > target) k--;
        e = k;
      }
      windowText = trimBlankLines(joinUnits(units, s, e));
      tokens = countTokens(windowText);
    }
    if (tokens > max) {
      // One piece denser than any estimate: cut it with exact counts.
      for (const piece of exactPieces(units[s]!.text, max)) windows.push(piece);
      s++;
      continue;
    }
    if (windowText.length > 0) {
      windows.push({ text: windowText, tokens });
      if (windowText.length > 200) ratio = clampRatio((tokens / windowText.length) * 1.05);
    }
    if (e >= n) break;

    let next = e;
    const strongBreak = units[e]!.prio >= 2;
    if (opts.overlapTokens > 0 && !(strongBreak && opts.overlapAfterStrong === false)) {
      let ov = 0;
      while (next - 1 > s) {
        const est = units[next - 1]!.text.length * ratio;
        if (ov + est > opts.overlapTokens) break;
        ov += est;
        next--;
      }
    }
    s = next;
  }
  return windows;
}

function clampRatio(r: number): number {
  return Number.isFinite(r) ? Math.min(4, Math.max(0.02, r)) : 0.35;
}

function chooseBreak(units: Unit[], cum: number[], s: number, e: number, ratio: number, strongFill: number, weakFill: number): number {
  const floor = Math.min(strongFill, weakFill);
  let weak = -1;
  for (let b = e; b > s; b--) {
    const fill = cum[b - s - 1]! * ratio; // tokens (estimated) in units s..b-1
    if (fill < floor) break;
    const p = units[b]!.prio;
    if (p >= 2 && fill >= strongFill) return b;
    if (weak < 0 && p >= 1 && fill >= weakFill) weak = b;
  }
  return weak >= 0 ? weak : e;
}

function joinUnits(units: Unit[], s: number, e: number): string {
  let out = '';
  for (let i = s; i < e; i++) out += units[i]!.text;
  return out;
}

/** Cuts a long line into pieces of at most `size` characters, after whitespace when there is some nearby. */
function cutLine(text: string, size: number): string[] {
  const out: string[] = [];
  let pos = 0;
  while (pos < text.length) {
    let end = Math.min(text.length, pos + size);
    if (end < text.length) {
      const minEnd = pos + Math.floor(size / 2);
      for (let k = end - 1; k >= minEnd; k--) {
        const c = text.charCodeAt(k);
        if (c === 32 || c === 9) {
          end = k + 1;
          break;
        }
      }
      const c = text.charCodeAt(end - 1);
      if (c >= 0xd800 && c <= 0xdbff && end - 1 > pos) end--; // never split a surrogate pair
    }
    out.push(text.slice(pos, end));
    pos = end;
  }
  return out;
}

/** Windows for one piece of text that is denser than the estimate allows: halve (at whitespace) until each half fits. */
function exactPieces(text: string, max: number): TextWindow[] {
  const trimmed = trimBlankLines(text);
  if (!trimmed) return [];
  const tokens = countTokens(trimmed);
  if (tokens <= max || trimmed.length < 2) return [{ text: trimmed, tokens }];
  let mid = Math.floor(trimmed.length / 2);
  // Prefer to cut after whitespace near the middle.
  const lo = Math.floor(trimmed.length / 4);
  for (let k = mid; k > lo; k--) {
    const w = trimmed.charCodeAt(k - 1);
    if (w === 32 || w === 9 || w === 10) {
      mid = k;
      break;
    }
  }
  const c = trimmed.charCodeAt(mid - 1);
  if (c >= 0xd800 && c <= 0xdbff) mid++;
  return [...exactPieces(trimmed.slice(0, mid), max), ...exactPieces(trimmed.slice(mid), max)];
}

/** Prose: strong breaks at paragraph starts (after a blank line), weak ones before list items and headings. */
export const prosePriorities: BreakPriorities = (lines) => {
  const p = new Uint8Array(lines.length);
  let prevBlank = true;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const blank = l.trim().length === 0;
    if (!blank) {
      if (prevBlank) p[i] = 2;
      else if (/^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s|^\s{0,3}#{1,6}\s/.test(l)) p[i] = 1;
    }
    prevBlank = blank;
  }
  return p;
};

/** Code: strong breaks before an unindented line that follows a blank line, weak ones after any blank line. */
export const codePriorities: BreakPriorities = (lines) => {
  const p = new Uint8Array(lines.length);
  let prevBlank = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const blank = l.trim().length === 0;
    if (!blank && prevBlank) {
      const c = l.charCodeAt(0);
      p[i] = c === 32 || c === 9 || c === 125 /* } */ || c === 41 /* ) */ ? 1 : 2;
    }
    prevBlank = blank;
  }
  return p;
};

/** Strong breaks exactly at the given line indexes (member starts), weak ones after blank lines. */
export function boundaryPriorities(boundaries: readonly number[]): BreakPriorities {
  return (lines) => {
    const p = codePriorities(lines);
    for (let i = 0; i < p.length; i++) if (p[i]! > 1) p[i] = 1;
    for (const b of boundaries) if (b >= 0 && b < lines.length) p[b] = 2;
    return p;
  };
}
