import { describe, expect, it } from 'vitest';
import { dedupeSegments, seamOverlap } from '../../transcription/transcripts/dedupe.js';
import { parseVtt } from '../../transcription/transcripts/vtt.js';
import { wordCount } from '../../transcription/transcripts/segments.js';

const seg = (start: number, end: number, text: string) => ({ start, end, text });
const texts = (input: unknown) => dedupeSegments(input).map((s) => s.text);

describe('rolling-echo dedupe: input shapes', () => {
  it('treats non-array input, null and missing segments as an empty list', () => {
    for (const input of [undefined, null, 'segments', 42, { segments: [] }, { 0: seg(0, 1, 'a b') }, true]) {
      expect(dedupeSegments(input)).toEqual([]);
    }
    expect(dedupeSegments([])).toEqual([]);
  });

  it('skips items that are not segments and segments with no words', () => {
    const out = dedupeSegments([null, 7, 'text', [], { start: 0 }, { text: 5 }, seg(0, 1, '   '), seg(1, 2, '<c></c>'), seg(2, 3, 'kept')]);
    expect(out).toEqual([{ start: 2, end: 3, text: 'kept' }]);
  });

  it('reads numeric strings as times, fills a missing start from the previous end, and never lets end precede start', () => {
    expect(dedupeSegments([{ start: '1.5', end: '2.5', text: 'one two' }, { text: 'three four' }, { start: 5, end: 4, text: 'five six' }])).toEqual([
      { start: 1.5, end: 2.5, text: 'one two' },
      { start: 2.5, end: 2.5, text: 'three four' },
      { start: 5, end: 5, text: 'five six' },
    ]);
  });

  it('strips inline timing and class tags and decodes entities', () => {
    expect(texts([seg(0, 2, 'hello<00:00:00.500><c> world</c> &amp; <v Bob>friends</v>&#33;')])).toEqual(['hello world & friends!']);
  });
});

describe('rolling-echo dedupe: collapsing', () => {
  it('keeps only the words after the longest overlap with the previous cue', () => {
    const out = dedupeSegments([
      seg(0, 2, 'so today we are going'),
      seg(2, 4, 'we are going to talk about'),
      seg(4, 6, 'to talk about durable workflows'),
    ]);
    expect(out.map((s) => s.text)).toEqual(['so today we are going', 'to talk about', 'durable workflows']);
  });

  it('compares against the previous cue as written, so chains of echoes collapse', () => {
    expect(texts([seg(0, 1, 'a b c'), seg(1, 2, 'a b c d e'), seg(2, 3, 'c d e f g'), seg(3, 4, 'e f g h')])).toEqual([
      'a b c',
      'd e',
      'f g',
      'h',
    ]);
  });

  it('drops ~10 ms hold cues that repeat the previous cue, and exact repeats (extending the kept segment)', () => {
    const out = dedupeSegments([
      seg(0, 2.5, 'hello world how'),
      seg(2.5, 2.51, 'hello world how'),
      seg(2.51, 5, 'hello world how are you'),
      seg(5, 5.01, 'are you'),
      seg(5.01, 7, 'hello world how are you'),
    ]);
    expect(out).toEqual([
      { start: 0, end: 2.5, text: 'hello world how' },
      { start: 2.51, end: 7, text: 'are you' },
    ]);
  });

  it('compares words without case and punctuation, but keeps the new words as written', () => {
    expect(texts([seg(0, 1, 'This is, IMPORTANT'), seg(1, 2, 'is important. Really!')])).toEqual(['This is, IMPORTANT', 'Really!']);
  });

  it('drops a cue that only repeats the tail of the previous one', () => {
    const out = dedupeSegments([seg(0, 2, 'one two three four'), seg(2, 3, 'three four')]);
    expect(out).toEqual([{ start: 0, end: 3, text: 'one two three four' }]);
  });

  it('never lets kept segments overlap in time', () => {
    const out = dedupeSegments([seg(0, 3, 'a b c'), seg(1, 4, 'b c d'), seg(2, 5, 'x y')]);
    expect(out).toEqual([
      { start: 0, end: 3, text: 'a b c' },
      { start: 3, end: 4, text: 'd' },
      { start: 4, end: 5, text: 'x y' },
    ]);
  });
});

describe('rolling-echo dedupe: what a speaker really says survives', () => {
  it('keeps a single repeated word at the seam (overlaps need two words)', () => {
    expect(texts([seg(0, 1, 'I said no'), seg(1, 2, 'no way')])).toEqual(['I said no', 'no way']);
  });

  it('keeps one-word cues that repeat ("No." "No.")', () => {
    expect(texts([seg(0, 1, 'No.'), seg(1, 2, 'No.')])).toEqual(['No.', 'No.']);
  });

  it('keeps repeats inside a cue', () => {
    expect(texts([seg(0, 2, 'very very very good'), seg(2, 3, 'yes yes yes')])).toEqual(['very very very good', 'yes yes yes']);
  });

  it('never dedupes across the whole file: a phrase repeated later, or not at the seam, stays', () => {
    const input = [
      seg(0, 2, 'we will fight on the beaches'),
      seg(2, 4, 'and in the fields'),
      seg(4, 6, 'we will fight on the beaches'),
      seg(6, 8, 'on the hills we will fight'),
    ];
    expect(texts(input)).toEqual(['we will fight on the beaches', 'and in the fields', 'we will fight on the beaches', 'on the hills we will fight']);
  });

  it('finds the largest overlap of at least two words only', () => {
    expect(seamOverlap(['a', 'b', 'a', 'b'], ['a', 'b', 'a', 'b', 'c'])).toBe(4);
    expect(seamOverlap(['x', 'y'], ['y', 'z'])).toBe(0);
    expect(seamOverlap(['x', 'y', 'z'], ['Y,', 'Z!', 'w'])).toBe(2);
    expect(seamOverlap([], ['a'])).toBe(0);
  });
});

describe('rolling-echo dedupe on YouTube-style auto-captions', () => {
  /** The shape YouTube serves: each cue shows the previous line and grows a new one word by word, with hold cues. */
  function rollingVtt(sentence: string[], wordsPerCue = 4): string {
    const cues: string[] = ['WEBVTT', 'Kind: captions', 'Language: en', ''];
    let t = 0;
    let previousLine = '';
    const ts = (s: number) => `00:${String(Math.floor(s / 60)).padStart(2, '0')}:${(s % 60).toFixed(3).padStart(6, '0')}`;
    for (let i = 0; i < sentence.length; i += wordsPerCue) {
      const line = sentence.slice(i, i + wordsPerCue);
      const timed = line.map((w, j) => (j === 0 ? w : `<${ts(t + j * 0.4)}><c> ${w}</c>`)).join('');
      cues.push(`${ts(t)} --> ${ts(t + 2)} align:start position:0%`, previousLine || ' ', timed, '');
      cues.push(`${ts(t + 2)} --> ${ts(t + 2.01)} align:start position:0%`, line.join(' '), ' ', '');
      previousLine = line.join(' ');
      t += 2.01;
    }
    return cues.join('\n');
  }

  it('halves the words, and reads as the sentence once', () => {
    const sentence = 'the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat by the door'.split(' ');
    const cues = parseVtt(rollingVtt(sentence));
    const out = dedupeSegments(cues);
    expect(out.map((s) => s.text).join(' ')).toBe(sentence.join(' '));
    expect(wordCount(out)).toBe(sentence.length);
    expect(wordCount(cues)).toBeGreaterThanOrEqual(2 * sentence.length);
  });
});
