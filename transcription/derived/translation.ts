import { answerJson } from '../../llm/chat.js';
import { buildCues, layoutLines, speakerPrefix, type SubtitleCue, type SubtitleRules } from '../transcripts/cues.js';
import { type NumberedSegment, round3 } from '../transcripts/segments.js';
import { toJson, toMarkdown, toSrt, toTxt, toVtt, type TranscriptFormat, type TranscriptMeta } from '../transcripts/writers.js';
import { languageName } from '../../core/languages.js';
import { wrongLanguage } from './languages.js';

/**
 * A translated transcript keeps the original's timing exactly: what is translated is the original's subtitle cues
 * (transcription/transcripts/cues.ts), one line each, and every translated cue keeps its start, end and speaker.
 * The cues go to the model in chunks of numbered lines, with a few neighbouring lines before and after as context
 * (not to be translated), so a sentence cut across cues still reads as one; the answer maps back by number.
 * Pure: the activities (transcription/derived/activities.ts) call it.
 */

/** One line to translate: a cue of the original, its lines joined. */
export interface SourceLine {
  start: number;
  end: number;
  text: string;
  speaker?: string;
  turnStart?: boolean;
}

/** The original's cues as lines to translate. */
export function sourceLines(segments: readonly NumberedSegment[], rules: SubtitleRules): SourceLine[] {
  // Rounded to the millisecond, as SRT and VTT write them: the JSON's times are the subtitles'.
  return buildCues(segments, rules).map((c) => ({
    start: round3(c.start),
    end: round3(c.end),
    text: c.lines.join(' '),
    ...(c.speaker !== undefined && { speaker: c.speaker }),
    ...(c.turnStart && { turnStart: true }),
  }));
}

/** Chunk `i` of `size` lines: the range [from, to). */
export function chunkRange(count: number, size: number, index: number): { from: number; to: number } {
  return { from: index * size, to: Math.min(count, (index + 1) * size) };
}
export const chunkCount = (count: number, size: number) => Math.ceil(count / size);

/** The answer's shape: every numbered line, translated. */
export const TRANSLATION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['lines'],
  properties: {
    lines: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['n', 'text'], properties: { n: { type: 'integer' }, text: { type: 'string' } } },
    },
  },
} as const;

/** The marker the language-model fake (fakes/llm-transcripts.ts) recognises a translation request by. */
export const TRANSLATION_TASK = 'You translate numbered subtitle lines';

/** The request for lines [from, to), with up to `context` lines either side. */
export function translationAsk(lines: readonly SourceLine[], range: { from: number; to: number }, language: string, context: number) {
  const before = lines.slice(Math.max(0, range.from - context), range.from);
  const after = lines.slice(range.to, range.to + context);
  const own = lines.slice(range.from, range.to);
  const system = [
    `${TRANSLATION_TASK} of a transcript into ${languageName(language)}.`,
    'Translate every numbered line on its own, keeping its number: as many lines in the answer as were asked, none merged, split or left out, even where a sentence runs on into the next line.',
    'The context lines before and after are there to understand the text: do not translate them.',
    'Keep names as they are. Answer with JSON only: {"lines": [{"n": 1, "text": "..."}]}.',
  ].join(' ');
  const user = [
    `Target language: ${language}`,
    ...(before.length ? ['Context before (do not translate):', ...before.map((l) => l.text)] : []),
    'Lines to translate:',
    ...own.map((l, i) => `${i + 1}. ${l.text}`),
    ...(after.length ? ['Context after (do not translate):', ...after.map((l) => l.text)] : []),
  ].join('\n');
  return { system, user, schema: TRANSLATION_SCHEMA as unknown as Record<string, unknown>, schemaName: 'translation' };
}

/** Why an answer cannot be used; the chunk is asked again (TRANSLATION_ATTEMPTS), then the translation fails. */
export class TranslationMismatch extends Error {
  constructor(
    message: string,
    readonly code: 'LINES_MISMATCH' | 'WRONG_LANGUAGE',
  ) {
    super(`${code}: ${message}`);
    this.name = 'TranslationMismatch';
  }
}

/** The numbered texts of an answer: `{lines: [{n, text}]}`, or a plain list of strings, as models write them. */
function answerLines(content: string): { n: number; text: string }[] | undefined {
  const json = answerJson(content);
  const list = Array.isArray(json) ? json : (json as { lines?: unknown; translations?: unknown })?.lines ?? (json as { translations?: unknown })?.translations;
  if (!Array.isArray(list)) return undefined;
  return list.map((entry, i) =>
    typeof entry === 'string'
      ? { n: i + 1, text: entry }
      : { n: Number((entry as { n?: unknown; id?: unknown }).n ?? (entry as { id?: unknown }).id), text: String((entry as { text?: unknown }).text ?? '') },
  );
}

/**
 * The translated texts of the chunk's lines, in order, or a TranslationMismatch: a line missing, repeated, empty
 * or out of range (the model dropped or merged lines), or the answer in another language.
 */
export function readTranslation(content: string, sources: readonly SourceLine[], language: string): string[] {
  const lines = answerLines(content);
  if (!lines) throw new TranslationMismatch('the answer holds no list of lines', 'LINES_MISMATCH');
  const texts = new Map<number, string>();
  for (const l of lines) {
    if (!Number.isInteger(l.n) || l.n < 1 || l.n > sources.length || texts.has(l.n)) {
      throw new TranslationMismatch(`the answer numbers a line ${l.n}, of 1 to ${sources.length}, or numbers it twice`, 'LINES_MISMATCH');
    }
    texts.set(l.n, l.text.replace(/\s+/g, ' ').trim());
  }
  const missing = sources.map((_, i) => i + 1).filter((n) => !texts.get(n));
  if (missing.length) {
    throw new TranslationMismatch(`${sources.length} lines were asked and ${sources.length - missing.length} answered (missing: ${missing.slice(0, 10).join(', ')})`, 'LINES_MISMATCH');
  }
  const out = sources.map((_, i) => texts.get(i + 1)!);
  const wrong = wrongLanguage(sources.map((s) => s.text), out, language);
  if (wrong) throw new TranslationMismatch(`the answer is not in ${languageName(language)}: ${wrong}`, 'WRONG_LANGUAGE');
  return out;
}

/** A translated cue on screen: at most the rules' lines where the text fits, else wrapped at the line length. */
function cueLines(text: string, rules: SubtitleRules, prefix: number): string[] {
  const words = text.split(' ').filter(Boolean);
  const fitted = layoutLines(words, rules, prefix);
  if (fitted) return fitted;
  const out: string[] = [];
  for (const w of words) {
    const last = out[out.length - 1];
    if (last !== undefined && last.length + 1 + w.length <= rules.maxLineChars) out[out.length - 1] = `${last} ${w}`;
    else out.push(w);
  }
  return out.length ? out : [''];
}

/**
 * Every file of the translation: SRT and VTT with the original's cue times, and TXT, MD and JSON whose segments
 * are those cues (ids from 1, start, end, speaker, the translated text).
 */
export function renderTranslation(sources: readonly SourceLine[], texts: readonly string[], meta: TranscriptMeta & { language: string }, rules: SubtitleRules) {
  const cues: SubtitleCue[] = sources.map((s, i) => ({
    start: s.start,
    end: s.end,
    lines: cueLines(texts[i]!, rules, s.turnStart ? speakerPrefix(s.speaker).length : 0),
    ...(s.speaker !== undefined && { speaker: s.speaker }),
    ...(s.turnStart && { turnStart: true }),
  }));
  const segments: NumberedSegment[] = sources.map((s, i) => ({
    id: i + 1,
    start: s.start,
    end: s.end,
    text: texts[i]!,
    ...(s.speaker !== undefined && { speaker: s.speaker }),
  }));
  const files: Record<TranscriptFormat, string> = {
    srt: toSrt(cues),
    vtt: toVtt(cues),
    txt: toTxt(segments),
    md: toMarkdown(segments, meta),
    json: toJson(segments, meta).replace(/^\{\n/, `{\n  "language": ${JSON.stringify(meta.language)},\n`),
  };
  return { files, segments };
}
