import { normalizeSegment, type Segment } from './segments.js';

/**
 * Rolling-echo removal. Live and auto-generated captions (YouTube's among them), and streaming recognisers that
 * report growing hypotheses, repeat the tail of the previous cue at the start of the next and add a few words,
 * with ~10 ms "hold" cues in between. Written out as they are, a transcript says everything two or three times.
 *
 * The cleaner compares each cue with the one before it only (never across the whole file):
 *   1. input that is not an array is an empty list; items that are not objects with text are skipped;
 *   2. text is cleaned (inline timing and class tags stripped, entities decoded, whitespace collapsed);
 *   3. a hold cue (shorter than 50 ms) that repeats words of the previous cue is dropped;
 *   4. an exact repeat of the previous cue (2+ words, or any hold cue) is dropped: the previous one is extended;
 *   5. otherwise, when the new cue starts with the last k >= 2 words of the previous cue (largest k, compared
 *      without case and punctuation), only the words after them are kept; a cue left with no words is dropped.
 * A phrase that a speaker really repeats survives: one repeated word, a repeat inside a cue, and a repeat that is
 * not at the seam between two adjacent cues are never touched. Kept segments never overlap in time.
 * Speakers and words stay with their segment: cues of different speakers are never compared (two people may say
 * the same thing), and a trimmed cue keeps the words after the repeat (its words, when they match its text).
 */
export const HOLD_CUE_SECONDS = 0.05;
export const MIN_OVERLAP_WORDS = 2;

const comparable = (word: string): string => word.toLowerCase().replace(/[^\p{L}\p{N}']+/gu, '');

const words = (text: string): string[] => text.split(' ').filter(Boolean);

/** The largest k >= MIN_OVERLAP_WORDS with the last k words of `prev` equal to the first k of `next`; 0 if none. */
export function seamOverlap(prev: readonly string[], next: readonly string[]): number {
  const a = prev.map(comparable);
  const b = next.map(comparable);
  for (let k = Math.min(a.length, b.length); k >= MIN_OVERLAP_WORDS; k--) {
    let same = true;
    for (let i = 0; i < k && same; i++) same = a[a.length - k + i] === b[i] && b[i] !== '';
    if (same) return k;
  }
  return 0;
}

function sameText(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((w, i) => comparable(w) === comparable(b[i]!));
}

/** True when every word of `cue` occurs, in order and adjacent, somewhere in `prev`. */
function containedIn(prev: readonly string[], cue: readonly string[]): boolean {
  const a = prev.map(comparable).join(' ');
  const b = cue.map(comparable).join(' ');
  return b !== '' && ` ${a} `.includes(` ${b} `);
}

export function dedupeSegments(input: unknown): Segment[] {
  if (!Array.isArray(input)) return [];
  const out: Segment[] = [];
  /** The words of the previous cue as it was written, before trimming: the reference for the next seam. */
  let prevWords: string[] | undefined;
  let lastEnd = 0;
  for (const item of input) {
    const cue = normalizeSegment(item, lastEnd);
    if (!cue) continue;
    const cueWords = words(cue.text);
    const kept = out.at(-1);
    if (prevWords && kept && kept.speaker === cue.speaker) {
      const hold = cue.end - cue.start < HOLD_CUE_SECONDS;
      if (hold && containedIn(prevWords, cueWords)) {
        continue;
      }
      if ((cueWords.length >= MIN_OVERLAP_WORDS || hold) && sameText(prevWords, cueWords)) {
        kept.end = Math.max(kept.end, cue.end);
        lastEnd = kept.end;
        continue;
      }
      const k = seamOverlap(prevWords, cueWords);
      if (k > 0) {
        prevWords = cueWords;
        const rest = cueWords.slice(k);
        if (!rest.length) {
          kept.end = Math.max(kept.end, cue.end);
          lastEnd = kept.end;
          continue;
        }
        const start = Math.max(cue.start, kept.end);
        const { words: timed, ...trimmed } = cue;
        out.push({ ...trimmed, start, end: Math.max(start, cue.end), text: rest.join(' '), ...(timed?.length === cueWords.length && { words: timed.slice(k) }) });
        lastEnd = out.at(-1)!.end;
        continue;
      }
    }
    prevWords = cueWords;
    const start = kept ? Math.max(cue.start, kept.end) : cue.start;
    out.push({ ...cue, start, end: Math.max(start, cue.end) });
    lastEnd = out.at(-1)!.end;
  }
  return out;
}
