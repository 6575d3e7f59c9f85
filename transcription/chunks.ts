import fs from 'node:fs/promises';
import { createReadStream, createWriteStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { PermanentError } from '../core/errors.js';
import type { Tool } from '../core/tools.js';
import { type RunContext, runTool } from './media.js';

/**
 * Long audio for synchronous backends, split into files under the server's size limit (OpenAI takes 25 MB a
 * request) at silences, so no word is cut in two. The prepared audio is PCM WAV (transcription/media.ts), so a
 * chunk is a byte range of its samples behind a new header: sample-exact, and no second encoding.
 *
 * Where to cut: ffmpeg's `silencedetect` lists the pauses (0.3 s or longer); each chunk ends in the middle of the
 * last pause in the second half of what fits (as long as it can be, so fewer requests and more context per
 * request), and where there is none (noise all along) exactly at the limit.
 */
export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Bytes per sample frame (all channels). */
  blockAlign: number;
  /** Where the samples start, and how many bytes of them there are. */
  dataOffset: number;
  dataBytes: number;
  seconds: number;
}

/** The format and sample range of a PCM WAV file, from its header (any chunks before `data` skipped). */
export function parseWavHeader(head: Buffer, fileBytes: number): WavInfo {
  if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') {
    throw new PermanentError('The prepared audio is not a WAV file');
  }
  let at = 12;
  let fmt: Omit<WavInfo, 'dataOffset' | 'dataBytes' | 'seconds'> | undefined;
  while (at + 8 <= head.length) {
    const id = head.toString('latin1', at, at + 4);
    const size = head.readUInt32LE(at + 4);
    if (id === 'fmt ' && at + 24 <= head.length) {
      fmt = {
        channels: head.readUInt16LE(at + 10),
        sampleRate: head.readUInt32LE(at + 12),
        blockAlign: head.readUInt16LE(at + 20),
        bitsPerSample: head.readUInt16LE(at + 22),
      };
    } else if (id === 'data') {
      if (!fmt || !fmt.blockAlign || !fmt.sampleRate) break;
      const dataOffset = at + 8;
      // A streamed WAV says 0 or 0xFFFFFFFF here: the samples then run to the end of the file.
      const available = Math.max(0, fileBytes - dataOffset);
      const dataBytes = size > 0 && size !== 0xffffffff ? Math.min(size, available) : available;
      const whole = dataBytes - (dataBytes % fmt.blockAlign);
      return { ...fmt, dataOffset, dataBytes: whole, seconds: whole / fmt.blockAlign / fmt.sampleRate };
    }
    at += 8 + size + (size % 2);
  }
  throw new PermanentError('The prepared audio has no readable WAV format or data chunk');
}

export async function readWavInfo(file: string): Promise<WavInfo> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const head = Buffer.alloc(Math.min(size, 64 * 1024));
    await handle.read(head, 0, head.length, 0);
    return parseWavHeader(head, size);
  } finally {
    await handle.close();
  }
}

/** A 44-byte PCM WAV header for `dataBytes` bytes of samples in `format`. */
export function wavHeader(format: Pick<WavInfo, 'sampleRate' | 'channels' | 'bitsPerSample' | 'blockAlign'>, dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVE', 8, 'latin1');
  h.write('fmt ', 12, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(format.channels, 22);
  h.writeUInt32LE(format.sampleRate, 24);
  h.writeUInt32LE(format.sampleRate * format.blockAlign, 28);
  h.writeUInt16LE(format.blockAlign, 32);
  h.writeUInt16LE(format.bitsPerSample, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

export interface Silence {
  start: number;
  end: number;
}

/** `silencedetect`'s report (`silence_start: 3.6`, `silence_end: 4 | silence_duration: 0.4`); a last start with no end runs to `total`. */
export function parseSilences(stderr: string, total: number): Silence[] {
  const out: Silence[] = [];
  let open: number | undefined;
  for (const m of stderr.matchAll(/silence_(start|end):\s*(-?[\d.]+(?:e[-+]?\d+)?)/gi)) {
    const t = Math.max(0, Number(m[2]));
    if (!Number.isFinite(t)) continue;
    if (m[1]!.toLowerCase() === 'start') open = t;
    else if (open !== undefined) {
      if (t > open) out.push({ start: open, end: Math.min(t, total) });
      open = undefined;
    }
  }
  if (open !== undefined && total > open) out.push({ start: open, end: total });
  return out;
}

/** What counts as silence: quieter than -35 dBFS for at least 0.3 s (a pause between sentences). */
export const SILENCE_FILTER = 'silencedetect=noise=-35dB:d=0.3';

export async function detectSilences(ffmpeg: Tool, file: string, total: number, ctx: RunContext): Promise<Silence[]> {
  const { stderr } = await runTool(ffmpeg, ['-hide_banner', '-nostats', '-nostdin', '-i', file, '-vn', '-af', SILENCE_FILTER, '-f', 'null', '-'], ctx);
  return parseSilences(stderr, total);
}

export interface ChunkPlan {
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  /** True when the chunk ends at a silence (or at the end of the audio), false at a forced cut. */
  atSilence: boolean;
}

/**
 * Where to cut `total` seconds into chunks of at most `maxSeconds`: each chunk ends in the middle of the last
 * silence that lies (at least in part) in the second half of what fits, or, with none there, at the limit.
 */
export function planChunks(total: number, silences: readonly Silence[], maxSeconds: number): ChunkPlan[] {
  if (!(maxSeconds > 0)) throw new Error('planChunks: maxSeconds must be positive');
  const out: ChunkPlan[] = [];
  let start = 0;
  while (total - start > maxSeconds) {
    const limit = start + maxSeconds;
    const from = start + maxSeconds / 2;
    let cut: number | undefined;
    for (const s of silences) {
      // Only the part of a silence inside the window counts, and the cut goes in its middle.
      const a = Math.max(s.start, from);
      const b = Math.min(s.end, limit);
      if (b > a && (cut === undefined || (a + b) / 2 > cut)) cut = (a + b) / 2;
    }
    const end = cut ?? limit;
    out.push({ start, end, atSilence: cut !== undefined });
    start = end;
  }
  out.push({ start, end: total, atSilence: true });
  return out;
}

export interface AudioChunk {
  /** The chunk's file. */
  file: string;
  /** Where it starts in the whole audio, and how long it is (seconds, sample-exact). */
  start: number;
  seconds: number;
  bytes: number;
}

/**
 * Writes each planned chunk of a WAV file as a WAV file of its own (`chunk-000.wav`, ...) in `dir`, cut at whole
 * sample frames. Answers the chunks with their exact start and length.
 */
export async function writeChunks(source: string, info: WavInfo, plan: readonly ChunkPlan[], dir: string): Promise<AudioChunk[]> {
  await fs.mkdir(dir, { recursive: true });
  const frames = info.dataBytes / info.blockAlign;
  const frameAt = (seconds: number) => Math.min(frames, Math.max(0, Math.round(seconds * info.sampleRate)));
  const out: AudioChunk[] = [];
  for (const [i, p] of plan.entries()) {
    const first = frameAt(p.start);
    const last = frameAt(p.end);
    if (last <= first) continue;
    const bytes = (last - first) * info.blockAlign;
    const file = path.join(dir, `chunk-${String(i).padStart(3, '0')}.wav`);
    const partial = `${file}.part`;
    const sink = createWriteStream(partial);
    sink.write(wavHeader(info, bytes));
    const start = info.dataOffset + first * info.blockAlign;
    await pipeline(createReadStream(source, { start, end: start + bytes - 1 }), sink);
    await fs.rename(partial, file);
    out.push({ file, start: first / info.sampleRate, seconds: (last - first) / info.sampleRate, bytes: bytes + 44 });
  }
  return out;
}

/**
 * The longest chunk, in seconds, that fits in `maxBytes` as a WAV file of this format (one frame spare: chunk
 * edges are rounded to whole frames).
 */
export function maxChunkSeconds(info: Pick<WavInfo, 'blockAlign' | 'sampleRate'>, maxBytes: number): number {
  return (Math.floor((maxBytes - 44) / info.blockAlign) - 1) / info.sampleRate;
}
