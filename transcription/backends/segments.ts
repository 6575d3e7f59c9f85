import { normalizeSegment, round3, type Segment, seconds } from '../transcripts/segments.js';

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

/**
 * The segments of one answer, times in seconds from the start of the audio it was given, within it (0 to
 * `audioSeconds`). An answer with text but no segments is one segment over the whole audio. Undefined when the
 * body is not a transcript at all.
 */
export function segmentsFromAnswer(body: unknown, audioSeconds: number): Segment[] | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const o = body as Record<string, unknown>;
  if (Array.isArray(o.segments)) {
    const scale = timeScale(o.segments, audioSeconds);
    const out: Segment[] = [];
    for (const item of o.segments) {
      if (!item || typeof item !== 'object') continue;
      const raw = item as Record<string, unknown>;
      const scaled = {
        text: raw.text,
        start: seconds(raw.start) !== undefined ? seconds(raw.start)! * scale : undefined,
        end: seconds(raw.end) !== undefined ? seconds(raw.end)! * scale : undefined,
      };
      const s = normalizeSegment(scaled, out.at(-1)?.end ?? 0);
      if (!s) continue;
      const start = Math.min(s.start, audioSeconds);
      out.push({ start, end: Math.min(Math.max(s.end, start), audioSeconds), text: s.text });
    }
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
 */
export function stitchChunks(chunks: readonly ChunkTranscript[]): Segment[] {
  const out: Segment[] = [];
  for (const chunk of [...chunks].sort((a, b) => a.start - b.start)) {
    for (const s of chunk.segments) {
      const previousEnd = out.at(-1)?.end ?? 0;
      const start = Math.max(round3(chunk.start + s.start), previousEnd);
      out.push({ start, end: Math.max(round3(chunk.start + s.end), start), text: s.text });
    }
  }
  return out;
}
