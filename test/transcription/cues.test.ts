import { WebVTTParser } from 'webvtt-parser';
import { describe, expect, it } from 'vitest';
import { buildCues, DEFAULT_SUBTITLE_RULES, layoutLines, type SubtitleCue, type SubtitleRules } from '../../transcription/transcripts/cues.js';
import type { Segment, Word } from '../../transcription/transcripts/segments.js';
import { renderTranscript, toSrt, toTxt, toVtt } from '../../transcription/transcripts/writers.js';

/** Subtitle cues (transcription/transcripts/cues.ts) and the writers that show speakers. */

const SENTENCES = [
  'Welcome back to the show, everyone.',
  'Today we talk about durable pipelines and why they matter for small teams.',
  'I think the short answer is that nobody wants to rerun a four hour job.',
  'Right.',
  'And when a worker dies in the middle, the workflow simply picks up where it stopped, with nothing lost and nothing done twice.',
  'That sounds almost too good, so what is the catch?',
  'The catch is that every step must be idempotent, which takes some care.',
];

/** Words spoken at a steady ~13 characters a second, a short pause between sentences, alternating speakers. */
function conversation(): Segment[] {
  const out: Segment[] = [];
  let t = 0.5;
  for (const [i, sentence] of SENTENCES.entries()) {
    const words: Word[] = sentence.split(' ').map((word) => {
      const start = t;
      t += (word.length + 1) / 13;
      return { word, start: round(start), end: round(t - 0.04) };
    });
    out.push({ start: words[0]!.start, end: words.at(-1)!.end, text: sentence, speaker: i % 3 === 2 ? 'SPEAKER_01' : 'SPEAKER_00', words });
    t += 0.4;
  }
  return out;
}
const round = (n: number) => Math.round(n * 1000) / 1000;

function expectWithinRules(cues: SubtitleCue[], rules: SubtitleRules = DEFAULT_SUBTITLE_RULES): void {
  for (const [i, cue] of cues.entries()) {
    const prefix = cue.turnStart && cue.speaker ? cue.speaker.length + 2 : 0;
    expect(cue.lines.length).toBeLessThanOrEqual(rules.maxLines);
    cue.lines.forEach((line, k) => expect(line.length + (k ? 0 : prefix)).toBeLessThanOrEqual(rules.maxLineChars));
    expect(cue.end - cue.start).toBeLessThanOrEqual(rules.maxCueSeconds + 1e-9);
    expect(cue.end).toBeGreaterThan(cue.start);
    const next = cues[i + 1];
    if (next) expect(cue.end).toBeLessThanOrEqual(next.start + 1e-9);
    // Where the next cue leaves room, long enough to read.
    const room = (next?.start ?? Infinity) - cue.start;
    const chars = cue.lines.join(' ').length;
    if (room >= rules.minCueSeconds) expect(cue.end - cue.start).toBeGreaterThanOrEqual(rules.minCueSeconds - 1e-9);
    if (room >= chars / rules.maxCharsPerSecond) expect(chars / (cue.end - cue.start)).toBeLessThanOrEqual(rules.maxCharsPerSecond + 1e-6);
  }
}

describe('subtitle cues', () => {
  it('cuts a conversation with word times into cues within every rule, each with the right speaker', () => {
    const segments = conversation();
    const cues = buildCues(segments);
    expectWithinRules(cues);
    // Every word is in exactly one cue, in order, and the cue's speaker is the one who said it.
    const said = segments.flatMap((s) => s.words!.map((w) => ({ ...w, speaker: s.speaker })));
    const shown = cues.flatMap((c) => c.lines.join(' ').split(' ').map((word) => ({ word, speaker: c.speaker })));
    expect(shown).toEqual(said.map((w) => ({ word: w.word, speaker: w.speaker })));
    // A cue starts when its first word is spoken.
    let at = 0;
    for (const cue of cues) {
      expect(cue.start).toBeCloseTo(said[at]!.start, 6);
      at += cue.lines.join(' ').split(' ').length;
    }
    // The long sentence is cut at its clause ends; a short sentence shares a cue, on a line of its own.
    expect(cues.length).toBeLessThan(SENTENCES.length * 2);
    const texts = cues.map((c) => c.lines);
    expect(texts).toContainEqual(['Right.', 'And when a worker dies in the middle,']);
    expect(texts).toContainEqual(['with nothing lost and nothing done twice.']);
  });

  it('cuts at sentence ends where it can', () => {
    const text = 'This is one sentence here. And this is another one that follows it. Then a third one ends it all.';
    const cues = buildCues([{ start: 0, end: 7.5, text }]);
    expectWithinRules(cues);
    for (const cue of cues) expect(cue.lines.at(-1)).toMatch(/\.$/);
  });

  it('splits a long segment without words in proportion to its text: 30 words in 12 s are not one cue', () => {
    const text = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
    const cues = buildCues([{ start: 10, end: 22, text }]);
    expect(cues.length).toBeGreaterThanOrEqual(3);
    expectWithinRules(cues);
    expect(cues[0]!.start).toBe(10);
    expect(cues.at(-1)!.end).toBeCloseTo(22, 6);
    expect(cues.flatMap((c) => c.lines.join(' ').split(' '))).toEqual(text.split(' '));
  });

  it('never holds a cue over a long pause, nor across a change of speaker', () => {
    const cues = buildCues([
      { start: 0, end: 1, text: 'Hello.' },
      { start: 4, end: 5, text: 'Anyone?' },
      { start: 5.1, end: 6, text: 'Yes.', speaker: 'B' },
    ]);
    expect(cues.map((c) => [c.lines.join(' '), c.speaker])).toEqual([
      ['Hello.', undefined],
      ['Anyone?', undefined],
      ['Yes.', 'B'],
    ]);
    expect(cues[1]!.end).toBeLessThanOrEqual(5.1);
  });

  it('follows the rules it is given', () => {
    const rules: SubtitleRules = { maxLineChars: 20, maxLines: 1, maxCueSeconds: 3, minCueSeconds: 0.5, maxCharsPerSecond: 20 };
    const cues = buildCues(conversation(), rules);
    expectWithinRules(cues, rules);
    expect(cues.every((c) => c.lines.length === 1)).toBe(true);
  });

  it('lays out two lines as evenly as it can, breaking after punctuation', () => {
    expect(layoutLines('I went home, and then I slept for a very long time'.split(' '), DEFAULT_SUBTITLE_RULES)).toEqual([
      'I went home, and then I',
      'slept for a very long time',
    ]);
    expect(layoutLines('Right. And when a worker dies in the middle,'.split(' '), DEFAULT_SUBTITLE_RULES, 12)).toEqual(['Right.', 'And when a worker dies in the middle,']);
    expect(layoutLines('a'.repeat(50).split(' '), DEFAULT_SUBTITLE_RULES)).toEqual(['a'.repeat(50)]);
    expect(layoutLines(Array.from({ length: 30 }, () => 'word'), DEFAULT_SUBTITLE_RULES)).toBeUndefined();
  });
});

describe('writers with speakers', () => {
  const segments: Segment[] = [
    { start: 0, end: 2, text: 'Hi, I am Ana.', speaker: 'Ana' },
    { start: 2.2, end: 4, text: 'And I am Ben <really>.', speaker: 'Ben' },
    { start: 4.1, end: 5, text: 'Nice.', speaker: 'Ben' },
  ];
  const meta = { title: 'Two voices', transcriptSource: 'asr', createdAt: new Date('2026-01-02T03:04:05Z') };

  it('SRT labels the first cue of each turn; TXT and MD start a paragraph per turn with the name; JSON keeps the speaker', () => {
    const files = renderTranscript(segments, meta);
    expect(files.srt).toBe('1\n00:00:00,000 --> 00:00:02,000\nAna: Hi, I am Ana.\n\n2\n00:00:02,200 --> 00:00:05,000\nBen: And I am Ben <really>. Nice.\n');
    expect(files.txt).toBe('Ana: Hi, I am Ana.\n\nBen: And I am Ben <really>. Nice.\n');
    expect(files.md).toContain('**[00:00] Ana:** Hi, I am Ana.\n\n**[00:02] Ben:** And I am Ben \\<really\\>. Nice.\n');
    expect(JSON.parse(files.json).segments.map((s: Segment) => s.speaker)).toEqual(['Ana', 'Ben', 'Ben']);
    expect(toTxt([{ start: 0, end: 1, text: 'No one.' }])).toBe('No one.\n');
  });

  it('VTT is valid WebVTT to the W3C parser, with a voice span per speaker and text escaped', () => {
    const vtt = renderTranscript(segments, meta).vtt;
    const parsed = new WebVTTParser().parse(vtt, 'subtitles');
    expect(parsed.errors).toEqual([]);
    expect(parsed.cues.map((c) => [c.startTime, c.endTime])).toEqual([
      [0, 2],
      [2.2, 5],
    ]);
    const voices = parsed.cues.map((c) => c.tree.children[0]!);
    expect(voices.map((v) => [v.type, v.name, v.value])).toEqual([
      ['object', 'v', 'Ana'],
      ['object', 'v', 'Ben'],
    ]);
    expect(vtt).toContain('<v Ben>And I am Ben &lt;really&gt;. Nice.</v>');
    expect(toVtt([])).toBe('WEBVTT\n');
    const conversationVtt = toVtt(buildCues(conversation()));
    const tree = new WebVTTParser().parse(conversationVtt, 'subtitles');
    expect(tree.errors).toEqual([]);
    expect(tree.cues.length).toBe(buildCues(conversation()).length);
    expect(toSrt(buildCues(conversation()))).toMatch(/^1\n00:00:00,500 --> /);
  });
});
