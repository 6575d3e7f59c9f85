/**
 * A transcript is a list of timed segments. Times are seconds from the start of the media.
 * This module is pure: no I/O, safe anywhere (workflows included).
 */
export interface Segment {
  start: number;
  end: number;
  text: string;
  /** Who speaks, as the backend labelled them (`SPEAKER_00`, `A`) or as PATCH /api/jobs/:id/speakers named them. */
  speaker?: string;
  /** The segment's words with their own times, when the backend gave them. */
  words?: Word[];
}

/** One word and when it is spoken (seconds from the start of the media). */
export interface Word {
  start: number;
  end: number;
  word: string;
}

/** A correction of a segment's text (PATCH /api/jobs/:id/segments/:segmentId): what the backend said, and when. */
export interface SegmentEdit {
  originalText: string;
  editedAt: string;
}

/** A numbered segment, as stored (`segmentsJson`) and written to the JSON file. */
export interface NumberedSegment extends Segment {
  id: number;
  edit?: SegmentEdit;
}

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  lrm: '',
  rlm: '',
};

/** Decodes the HTML entities WebVTT allows (named ones and numeric character references). */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/**
 * Cue text as plain words: inline timing tags (`<00:00:01.500>`), class, voice and styling tags (`<c>`, `<v Bob>`,
 * `<b>`) removed, entities decoded, whitespace (line breaks included) collapsed to single spaces.
 */
export function cleanText(text: string): string {
  return decodeEntities(text.replace(/<[^>\n]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();
}

/** A number of seconds from a JSON value: a number, or a numeric string. */
export function seconds(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * One segment from whatever a backend or a caption file gave: an object with `text` and `start`/`end` in seconds.
 * Anything else, or empty text, is undefined. A missing start follows the previous segment; a missing or earlier
 * end becomes the start.
 */
export function normalizeSegment(item: unknown, previousEnd = 0): Segment | undefined {
  if (!item || typeof item !== 'object' || Array.isArray(item)) return undefined;
  const o = item as Record<string, unknown>;
  if (typeof o.text !== 'string') return undefined;
  const text = cleanText(o.text);
  if (!text) return undefined;
  const start = seconds(o.start) ?? previousEnd;
  const end = seconds(o.end);
  const speaker = speakerLabel(o.speaker);
  const words = normalizeWords(o.words);
  return { start, end: end !== undefined && end >= start ? end : start, text, ...(speaker && { speaker }), ...(words && { words }) };
}

/** The longest speaker label or name kept: labels are short (`SPEAKER_00`), names are names. */
export const MAX_SPEAKER_LENGTH = 100;

/** A speaker label from a backend: a non-empty string or a number (some diarizers number speakers), cleaned. */
export function speakerLabel(value: unknown): string | undefined {
  const raw = typeof value === 'number' && Number.isInteger(value) ? String(value) : typeof value === 'string' ? value : undefined;
  const label = raw && cleanText(raw).slice(0, MAX_SPEAKER_LENGTH);
  return label || undefined;
}

/**
 * A segment's words: objects with the word (`word`, or `text` as some servers name it) and `start`/`end` in
 * seconds; words without times or text are left out, and times never run backwards. Undefined when none is left.
 */
export function normalizeWords(value: unknown): Word[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: Word[] = [];
  for (const item of value) {
    if (!item || typeof item !== 'object') continue;
    const o = item as Record<string, unknown>;
    const raw = typeof o.word === 'string' ? o.word : typeof o.text === 'string' ? o.text : undefined;
    const word = raw && cleanText(raw);
    const start = seconds(o.start);
    const end = seconds(o.end);
    if (!word || start === undefined || end === undefined) continue;
    const from = Math.max(start, out.at(-1)?.start ?? 0);
    out.push({ start: round3(from), end: round3(Math.max(end, from)), word });
  }
  return out.length ? out : undefined;
}

export function numbered(segments: readonly Segment[]): NumberedSegment[] {
  return segments.map((s, i) => ({
    id: i + 1,
    start: round3(s.start),
    end: round3(s.end),
    text: s.text,
    ...(s.speaker && { speaker: s.speaker }),
    ...(s.words && { words: s.words.map((w) => ({ start: round3(w.start), end: round3(w.end), word: w.word })) }),
    ...((s as NumberedSegment).edit && { edit: (s as NumberedSegment).edit }),
  }));
}

export const round3 = (n: number): number => Math.round(n * 1000) / 1000;

export function wordCount(segments: readonly Pick<Segment, 'text'>[]): number {
  return segments.reduce((n, s) => n + (s.text.match(/\S+/g)?.length ?? 0), 0);
}
