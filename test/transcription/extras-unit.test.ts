import { describe, expect, it } from 'vitest';
import { fakeTranslate, transcriptAnswer } from '../../fakes/llm-transcripts.js';
import { PermanentError } from '../../core/errors.js';
import { llmEndpoint } from '../../llm/chat.js';
import { canonicalLanguage } from '../../core/languages.js';
import { wrongLanguage } from '../../transcription/derived/languages.js';
import { assembleSummary, readPart, readTime } from '../../transcription/derived/summary.js';
import { readTranslation, renderTranslation, sourceLines, translationAsk, TranslationMismatch } from '../../transcription/derived/translation.js';
import { DEFAULT_SUBTITLE_RULES } from '../../transcription/transcripts/cues.js';
import type { NumberedSegment } from '../../transcription/transcripts/segments.js';

const segments: NumberedSegment[] = [
  { id: 1, start: 0, end: 2.5, text: 'Hello and welcome to the show.', speaker: 'A' },
  { id: 2, start: 3, end: 9.5, text: 'Today we talk about durable workflows, the activities they run, and why each one must be safe to run twice.', speaker: 'B' },
  { id: 3, start: 10, end: 12, text: 'Goodbye.', speaker: 'A' },
];
const lines = sourceLines(segments, DEFAULT_SUBTITLE_RULES);
const answer = (texts: string[]) => JSON.stringify({ lines: texts.map((text, i) => ({ n: i + 1, text })) });

describe('languages', () => {
  it('takes BCP 47 tags of known languages, canonical, and nothing else', () => {
    expect(['de', 'PT-br', 'zh-hant', 'en-US'].map(canonicalLanguage)).toEqual(['de', 'pt-BR', 'zh-Hant', 'en-US']);
    expect(['xx', 'English', 'de_DE!', '', 'zz-ZZ'].map(canonicalLanguage)).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  it('tells an answer in the wrong language, roughly', () => {
    const src = ['Hello and welcome to the show.', 'Today we talk about workflows.'];
    expect(wrongLanguage(src, src, 'de')).toMatch(/2 of 2 lines came back unchanged/);
    expect(wrongLanguage(src, ['Hallo und willkommen zur Sendung.', 'Heute sprechen wir über Workflows.'], 'de')).toBeUndefined();
    expect(wrongLanguage(src, src, 'en')).toBeUndefined();
    expect(wrongLanguage(src, ['Hallo und willkommen.', 'Heute sprechen wir.'], 'ru')).toMatch(/not in the script/);
    expect(wrongLanguage(src, ['Привет и добро пожаловать.', 'Сегодня мы говорим.'], 'ru')).toBeUndefined();
    expect(wrongLanguage(src, ['Привет и добро пожаловать.', 'Сегодня мы говорим.'], 'fr')).toMatch(/not in the script/);
    // Short lines and names may stay as they are.
    expect(wrongLanguage(['OK.', 'Gristmill.', 'Today we talk.'], ['OK.', 'Gristmill.', 'Heute reden wir.'], 'de')).toBeUndefined();
  });
});

describe('translation', () => {
  it('translates the cues, numbered, with context either side', () => {
    expect(lines.length).toBeGreaterThanOrEqual(4);
    const ask = translationAsk(lines, { from: 1, to: 2 }, 'de', 1);
    expect(ask.user).toBe(`Target language: de\nContext before (do not translate):\n${lines[0]!.text}\nLines to translate:\n1. ${lines[1]!.text}\nContext after (do not translate):\n${lines[2]!.text}`);
    expect(ask.system).toMatch(/into German \(de\)/);
  });

  it('maps an answer back by number, in any order, and refuses dropped, merged, repeated or extra lines', () => {
    const own = lines.slice(0, 3);
    const good = own.map((l) => fakeTranslate(l.text, 'de'));
    expect(readTranslation(JSON.stringify({ lines: [{ n: 3, text: good[2] }, { n: 1, text: good[0] }, { n: 2, text: good[1] }] }), own, 'de')).toEqual(good);
    expect(readTranslation(JSON.stringify(good), own, 'de')).toEqual(good);
    expect(readTranslation('```json\n' + answer(good) + '\n```', own, 'de')).toEqual(good);
    const refused = (content: string) => {
      try {
        readTranslation(content, own, 'de');
      } catch (err) {
        return err instanceof TranslationMismatch ? err.message : `not a mismatch: ${(err as Error).message}`;
      }
      return 'accepted';
    };
    expect(refused(answer(good.slice(0, 2)))).toBe('LINES_MISMATCH: 3 lines were asked and 2 answered (missing: 3)');
    expect(refused(answer([`${good[0]} ${good[1]}`, good[2]!]))).toMatch(/^LINES_MISMATCH/);
    expect(refused(answer([...good, 'extra']))).toMatch(/^LINES_MISMATCH: the answer numbers a line 4/);
    expect(refused(JSON.stringify({ lines: [{ n: 1, text: good[0] }, { n: 1, text: good[1] }, { n: 3, text: good[2] }] }))).toMatch(/twice/);
    expect(refused(answer([good[0]!, '', good[2]!]))).toMatch(/missing: 2/);
    expect(refused(answer(own.map((l) => l.text)))).toMatch(/^WRONG_LANGUAGE: the answer is not in German \(de\)/);
  });

  it('keeps every cue\'s start, end and speaker', () => {
    const texts = lines.map((l) => fakeTranslate(l.text, 'de'));
    const { files, segments: out } = renderTranslation(lines, texts, { title: 'T (de)', transcriptSource: 'translation', createdAt: new Date(0), language: 'de' }, DEFAULT_SUBTITLE_RULES);
    expect(out.map((s) => [s.start, s.end, s.speaker])).toEqual(lines.map((l) => [l.start, l.end, l.speaker]));
    const times = (t: string) => t.match(/^[\d:.,]+ --> [\d:.,]+$/gm);
    const original = renderTranslation(lines, lines.map((l) => l.text), { title: 'T', transcriptSource: 'asr', createdAt: new Date(0), language: 'en' }, DEFAULT_SUBTITLE_RULES);
    expect(times(files.vtt)).toEqual(times(original.files.vtt));
    expect(files.vtt).toContain('<v A>[de] Hello and welcome to the show.</v>');
    expect(JSON.parse(files.json)).toMatchObject({ language: 'de', title: 'T (de)' });
  });

  it('the fake answers a translation request, and misbehaves on demand', () => {
    const ask = translationAsk(lines, { from: 0, to: 3 }, 'de', 1);
    const messages = [{ role: 'system', content: ask.system }, { role: 'user', content: ask.user }];
    expect(readTranslation(transcriptAnswer(messages)!, lines.slice(0, 3), 'de')).toEqual(lines.slice(0, 3).map((l) => `[de] ${l.text}`));
    expect(JSON.parse(transcriptAnswer(messages, 'drop-line')!).lines).toHaveLength(2);
    expect(JSON.parse(transcriptAnswer(messages, 'merge-lines')!).lines.map((l: { n: number }) => l.n)).toEqual([1, 3]);
    expect(transcriptAnswer([{ role: 'system', content: 'You turn social media posts into recipes.' }])).toBeUndefined();
  });
});

describe('the language model', () => {
  it('is one endpoint for every service, and its absence a permanent failure saying what to set', () => {
    expect(llmEndpoint({ llm: { baseUrl: 'http://llm/v1', apiKey: 'k', model: 'm', style: 'openai' } })).toEqual({ baseUrl: 'http://llm/v1', apiKey: 'k', model: 'm', style: 'openai' });
    expect(() => llmEndpoint({ llm: { baseUrl: undefined, apiKey: undefined, model: 'm', style: 'openai' } })).toThrow(PermanentError);
    expect(() => llmEndpoint({ llm: { baseUrl: undefined, apiKey: undefined, model: 'm', style: 'openai' } })).toThrow(/set LLM_API_BASE_URL/);
  });
});

describe('summary', () => {
  it('reads times as models write them', () => {
    expect(['00:12', '1:02:03', '[03:04]', 75, '90'].map(readTime)).toEqual([12, 3723, 184, 75, 90]);
    expect(readTime('soon')).toBeUndefined();
  });

  it('puts every chapter at the start of a segment of its part, and always one at the part\'s start', () => {
    const part = readPart(
      JSON.stringify({ summary: 'A show.', chapters: [{ start: '00:04', title: 'Workflows', summary: 'Durable ones.' }, { start: '99:00', title: 'Out of range', summary: '' }, { start: 'never', title: 'No time', summary: '' }] }),
      segments,
    );
    expect(part.chapters.map((c) => [c.start, c.title])).toEqual([[0, 'Beginning'], [3, 'Workflows'], [10, 'Out of range']]);
    const s = assembleSummary('A show.', [part], 12);
    expect(s.chapters.map((c) => [c.start, c.end])).toEqual([[0, 3], [3, 10], [10, 12]]);
    expect(() => readPart(JSON.stringify({ chapters: [] }), segments)).toThrow(/SUMMARY_UNUSABLE/);
  });
});
