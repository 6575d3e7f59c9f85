import { normalizeSegment, normalizeWords, round3, type Segment, seconds, type Word } from '../transcripts/segments.js';

/**
 * Reading a synchronous backend's transcript, and stitching the transcripts of an audio file's chunks. Pure.
 *
 * Answers come in a few shapes, all with `segments: [{start, end, text, ...}]` and the whole `text`:
 * OpenAI's `verbose_json` (also Groq, Speaches, whisper.cpp), whisper-asr-webservice's JSON (Whisper's own result),
 * and LocalAI's, whose times are Go durations: nanoseconds. Models that give no timestamps (`json`, e.g.
 * gpt-4o-transcribe) answer only `text`.
 */

/** Whisper decodes 30-second windows: a segment never ends further than this past the audio it was given. */
const WINDOW_SECONDS = 30;

/**
 * The unit of an answer's times, told by their size: seconds when the last end fits the audio (plus a decoding
 * window), else milliseconds, else nanoseconds (LocalAI).
 */
function timeScale(items: unknown[], audioSeconds: number): number {
  let last = 0;
  for (const item of items) {
    if (!item || typeof item !== 'object') continue;
    const o = item as Record<string, unknown>;
    last = Math.max(last, seconds(o.end) ?? 0, seconds(o.start) ?? 0);
  }
  const limit = audioSeconds + WINDOW_SECONDS;
  if (last <= limit) return 1;
  if (last / 1e3 <= limit) return 1e-3;
  return 1e-9;
}

/** A list of timed items (segments or words) with their times multiplied by `scale`. */
function scaled(items: unknown, scale: number): unknown {
  if (!Array.isArray(items) || scale === 1) return items;
  return items.map((item) => {
    if (!item || typeof item !== 'object') return item;
    const o = item as Record<string, unknown>;
    const at = (v: unknown) => (seconds(v) !== undefined ? seconds(v)! * scale : undefined);
    return { ...o, start: at(o.start), end: at(o.end), ...(Array.isArray(o.words) && { words: scaled(o.words, scale) }) };
  });
}

/**
 * Words given beside the segments (OpenAI's `verbose_json` with `timestamp_granularities[]=word` puts them at the
 * top level) go to the segment their middle falls in (or the nearest before it); a segment that has words of its
 * own (whisper.cpp, whisper-asr-webservice, WhisperX) keeps them.
 */
function attachWords(segments: Segment[], words: Word[] | undefined): void {
  if (!words?.length || segments.some((s) => s.words)) return;
  const byIndex = new Map<number, Word[]>();
  let at = 0;
  for (const w of words) {
    const middle = (w.start + w.end) / 2;
    while (at + 1 < segments.length && segments[at + 1]!.start <= middle) at++;
    byIndex.set(at, [...(byIndex.get(at) ?? []), w]);
  }
  for (const [i, list] of byIndex) segments[i]!.words = list;
}

/**
 * The segments of one answer, times in seconds from the start of the audio it was given, within it (0 to
 * `audioSeconds`), with their speaker (diarizing servers) and words (when asked for) as given. An answer with text
 * but no segments is one segment over the whole audio. Undefined when the body is not a transcript at all.
 */
export function segmentsFromAnswer(body: unknown, audioSeconds: number): Segment[] | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const o = body as Record<string, unknown>;
  if (Array.isArray(o.segments)) {
    const scale = timeScale(o.segments, audioSeconds);
    const out: Segment[] = [];
    for (const item of scaled(o.segments, scale) as unknown[]) {
      const s = normalizeSegment(item, out.at(-1)?.end ?? 0);
      if (!s) continue;
      const start = Math.min(s.start, audioSeconds);
      const words = s.words?.map((w) => ({ ...w, start: Math.min(w.start, audioSeconds), end: Math.min(w.end, audioSeconds) }));
      out.push({ ...s, start, end: Math.min(Math.max(s.end, start), audioSeconds), ...(words && { words }) });
    }
    attachWords(out, normalizeWords(scaled(o.words, scale)));
    if (out.length || !(typeof o.text === 'string' && o.text.trim())) return out;
  }
  if (typeof o.text === 'string') {
    const text = o.text.replace(/\s+/g, ' ').trim();
    return text ? [{ start: 0, end: audioSeconds, text }] : [];
  }
  return undefined;
}

/** One chunk of an audio file and its transcript (times from the chunk's start). */
export interface ChunkTranscript {
  /** Where the chunk starts in the whole audio, in seconds. */
  start: number;
  segments: Segment[];
}

/**
 * The whole transcript: each chunk's segments moved by the chunk's start, in order. A segment that would begin
 * before the previous one ended (a model stretching its last segment past a cut) begins where that one ended.
 * Speaker labels of the second chunk on get ` (part n)`: PATCH /api/jobs/:id/speakers names them (two labels may
 * get the same name).
 */
export function stitchChunks(chunks: readonly ChunkTranscript[]): Segment[] {
  const out: Segment[] = [];
  for (const [part, chunk] of [...chunks].sort((a, b) => a.start - b.start).entries()) {
    for (const raw of chunk.segments) {
      // A backend labels the speakers of each request afresh: `A` of one chunk need not be `A` of the next.
      const s = raw.speaker && part > 0 ? { ...raw, speaker: `${raw.speaker} (part ${part + 1})` } : raw;
      const previousEnd = out.at(-1)?.end ?? 0;
      const start = Math.max(round3(chunk.start + s.start), previousEnd);
      const words = s.words?.map((w) => ({ word: w.word, start: round3(chunk.start + w.start), end: round3(chunk.start + w.end) }));
      out.push({ ...s, start, end: Math.max(round3(chunk.start + s.end), start), ...(words && { words }) });
    }
  }
  return out;
}
