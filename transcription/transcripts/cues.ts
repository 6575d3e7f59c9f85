import type { Segment } from './segments.js';

/**
 * Subtitle cues (SRT, VTT) cut to the common broadcast rules, from a transcript's segments. Pure.
 *
 * A segment as the model gave it can be 30 words on screen for 12 seconds. Cues are rebuilt from the words: the
 * backend's word times when it gave them, else each segment's text spread over its time in proportion to the
 * words' lengths. Within one speaker's turn (a change of speaker always starts a new cue), the cut points are
 * chosen together (dynamic programming over the words) so that every cue
 *   - fits in `maxLines` lines of at most `maxLineChars` characters (the first cue of a turn also holds the
 *     speaker's `Name: ` label, which SRT shows),
 *   - spans at most `maxCueSeconds` of speech (a single word longer than that is a cue of its own), with no pause
 *     over 1.2 s inside it,
 * and, at the lowest cost, ends at a sentence end, else a clause end (`,;:` and dashes) or a pause, is not shorter
 * than `minCueSeconds` and asks no more than `maxCharsPerSecond` of the reader. A cue then stays on screen long
 * enough to read (at least `minCueSeconds`, and its characters at `maxCharsPerSecond`) where the gap before the
 * next cue leaves room, and never longer than `maxCueSeconds`.
 */
export interface SubtitleRules {
  maxLineChars: number;
  maxLines: number;
  maxCueSeconds: number;
  minCueSeconds: number;
  maxCharsPerSecond: number;
}

export const DEFAULT_SUBTITLE_RULES: SubtitleRules = { maxLineChars: 42, maxLines: 2, maxCueSeconds: 7, minCueSeconds: 1, maxCharsPerSecond: 17 };

export interface SubtitleCue {
  start: number;
  end: number;
  lines: string[];
  speaker?: string;
  /** The first cue of a speaker's turn: SRT labels it. */
  turnStart?: boolean;
}

interface Token {
  word: string;
  start: number;
  end: number;
}

/** A speaker's turn: consecutive segments of one speaker (or of none). */
interface Run {
  speaker?: string;
  tokens: Token[];
}

const SENTENCE_END = /[.?!…]["'”’)\]]*$/;
const CLAUSE_END = /[,;:–—]["'”’)\]]*$|^[-–—]$/;
/** A pause at least this long between words is a good place to cut. */
const PAUSE_SECONDS = 0.7;
/** A pause longer than this is always a cut: a cue never shows words that long before they are spoken. */
const MAX_PAUSE_IN_CUE = 1.2;

/** The label SRT puts before the first line of a turn. */
export const speakerPrefix = (speaker: string | undefined): string => (speaker ? `${speaker}: ` : '');

/** A segment's words with times: its own, or its text spread over its time by the words' lengths. */
function segmentTokens(s: Segment): Token[] {
  if (s.words?.length) return s.words.map((w) => ({ word: w.word, start: w.start, end: Math.max(w.end, w.start) }));
  const words = s.text.split(/\s+/).filter(Boolean);
  const weight = words.reduce((n, w) => n + w.length + 1, 0);
  const span = Math.max(0, s.end - s.start);
  let at = s.start;
  return words.map((word) => {
    const start = at;
    at += (span * (word.length + 1)) / weight;
    return { word, start, end: at };
  });
}

function runsOf(segments: readonly Segment[]): Run[] {
  const runs: Run[] = [];
  for (const s of segments) {
    const tokens = segmentTokens(s);
    if (!tokens.length) continue;
    const last = runs.at(-1);
    if (last && last.speaker === s.speaker) last.tokens.push(...tokens);
    else runs.push({ ...(s.speaker && { speaker: s.speaker }), tokens });
  }
  // Times never run backwards (a word a backend placed before the previous one starts where that one did).
  let floor = 0;
  for (const run of runs) {
    for (const t of run.tokens) {
      t.start = Math.max(t.start, floor);
      t.end = Math.max(t.end, t.start);
      floor = t.start;
    }
  }
  return runs;
}

/**
 * The words laid out in at most `maxLines` lines of `maxLineChars` (the first line after `prefix`), two lines as
 * even as possible and split after punctuation where it can; undefined when they do not fit. A single word is
 * always a cue, however long.
 */
export function layoutLines(words: readonly string[], rules: SubtitleRules, prefix = 0): string[] | undefined {
  const L = rules.maxLineChars;
  const whole = words.join(' ');
  if (prefix + whole.length <= L || words.length === 1) return [whole];
  if (rules.maxLines < 2) return undefined;
  let best: { lines: string[]; score: number } | undefined;
  for (let k = 1; k < words.length; k++) {
    const first = words.slice(0, k).join(' ');
    const second = words.slice(k).join(' ');
    if (prefix + first.length > L) break;
    if (second.length > L) continue;
    const score = Math.abs(prefix + first.length - second.length) - (SENTENCE_END.test(words[k - 1]!) ? 20 : CLAUSE_END.test(words[k - 1]!) ? 12 : 0);
    if (!best || score < best.score) best = { lines: [first, second], score };
  }
  if (best || rules.maxLines === 2) return best?.lines;
  // Three or more lines: filled greedily.
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    const room = L - (lines.length ? 0 : prefix);
    if (line && line.length + 1 + w.length > room) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  lines.push(line);
  return lines.length <= rules.maxLines && lines.every((l, i) => l.length + (i ? 0 : prefix) <= L || !l.includes(' ')) ? lines : undefined;
}

/** Cuts one turn into cues at the cheapest points (see the module comment). */
function cutRun(run: Run, nextStart: number, rules: SubtitleRules): { from: number; to: number; lines: string[] }[] {
  const t = run.tokens;
  const n = t.length;
  const prefixOf = (i: number) => (i === 0 ? speakerPrefix(run.speaker).length : 0);
  const maxChars = rules.maxLines * (rules.maxLineChars + 1);
  const best: { cost: number; from: number; lines: string[] }[] = new Array(n + 1);
  best[0] = { cost: 0, from: -1, lines: [] };
  for (let j = 1; j <= n; j++) {
    const after = j < n ? t[j]!.start : nextStart;
    const last = t[j - 1]!.word;
    const pause = j < n && t[j]!.start - t[j - 1]!.end >= PAUSE_SECONDS;
    const breakCost = j === n || SENTENCE_END.test(last) ? 0 : pause ? 0.5 : CLAUSE_END.test(last) ? 1.5 : 4;
    let chars = 0;
    for (let i = j - 1; i >= 0; i--) {
      if (i < j - 1 && t[i + 1]!.start - t[i]!.end > MAX_PAUSE_IN_CUE) break;
      chars += t[i]!.word.length + (i < j - 1 ? 1 : 0);
      if (chars + prefixOf(i) > maxChars && i < j - 1) break;
      const speech = t[j - 1]!.end - t[i]!.start;
      if (speech > rules.maxCueSeconds && i < j - 1) break;
      if (!best[i]) continue;
      const lines = layoutLines(t.slice(i, j).map((x) => x.word), rules, prefixOf(i));
      if (!lines) continue;
      // How long the cue can stay up: until the next cue starts, at most maxCueSeconds.
      const room = Math.min(rules.maxCueSeconds, Math.max(speech, after - t[i]!.start));
      const cps = chars / Math.max(room, 0.001);
      const cost =
        best[i]!.cost + 1 + breakCost + 4 * Math.max(0, cps / rules.maxCharsPerSecond - 1) + (room < rules.minCueSeconds ? 2 : 0) + (lines.length > 1 ? 0.2 : 0);
      if (!best[j] || cost < best[j]!.cost) best[j] = { cost, from: i, lines };
    }
  }
  const cuts: { from: number; to: number; lines: string[] }[] = [];
  for (let j = n; j > 0; j = best[j]!.from) cuts.unshift({ from: best[j]!.from, to: j, lines: best[j]!.lines });
  return cuts;
}

/** The subtitle cues of a transcript under `rules`. */
export function buildCues(segments: readonly Segment[], rules: SubtitleRules = DEFAULT_SUBTITLE_RULES): SubtitleCue[] {
  const runs = runsOf(segments);
  const raw: (SubtitleCue & { speechEnd: number; chars: number })[] = [];
  for (const [r, run] of runs.entries()) {
    const nextStart = runs[r + 1]?.tokens[0]?.start ?? Infinity;
    for (const [k, cut] of cutRun(run, nextStart, rules).entries()) {
      const first = run.tokens[cut.from]!;
      const last = run.tokens[cut.to - 1]!;
      raw.push({
        start: first.start,
        end: last.end,
        speechEnd: last.end,
        chars: cut.lines.join(' ').length,
        lines: cut.lines,
        ...(run.speaker && { speaker: run.speaker }),
        ...(k === 0 && run.speaker && { turnStart: true }),
      });
    }
  }
  return raw.map((c, i) => {
    const next = raw[i + 1]?.start ?? Infinity;
    const want = Math.max(rules.minCueSeconds, c.chars / rules.maxCharsPerSecond);
    const limit = Math.min(next, c.start + Math.max(rules.maxCueSeconds, c.speechEnd - c.start));
    const end = Math.min(Math.max(c.speechEnd, c.start + want), limit);
    const { speechEnd: _s, chars: _c, ...cue } = c;
    return { ...cue, end: Math.max(end, c.start) };
  });
}
