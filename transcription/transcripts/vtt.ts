import { cleanText, type Segment } from './segments.js';

/**
 * A WebVTT parser for captions as video sites serve them (yt-dlp `--sub-format vtt`): header, NOTE/STYLE/REGION
 * blocks, cue identifiers, cue settings, hour-less timestamps, CRLF, a BOM, inline timing and class tags, voice
 * spans (their name becomes the cue's speaker: captions that say who speaks, and Gristmill's own VTT). Cues with
 * no text after cleaning are kept out. Pure; never throws on malformed input (unparsable blocks are skipped).
 */
export interface Cue extends Segment {
  /** The cue's identifier line, when it had one. */
  id?: string;
}

const TIMING = /^((?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})\s+-->\s+((?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})(?:\s+.*)?$/;

/** `01:02:03.456`, `02:03.456` (and a comma instead of the dot) to seconds. */
export function parseTimestamp(raw: string): number | undefined {
  const m = /^(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})$/.exec(raw.trim());
  if (!m) return undefined;
  const [, h, min, s, frac] = m;
  const minutes = Number(min);
  const secs = Number(s);
  if (minutes > 59 && h !== undefined) return undefined;
  if (secs > 59) return undefined;
  return Number(h ?? 0) * 3600 + minutes * 60 + secs + Number(frac!.padEnd(3, '0')) / 1000;
}

export function parseVtt(input: string): Cue[] {
  const text = input.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const blocks = text.split(/\n{2,}/);
  const cues: Cue[] = [];
  for (const [i, block] of blocks.entries()) {
    const lines = block.split('\n');
    while (lines.length && lines[0]!.trim() === '') lines.shift();
    if (!lines.length) continue;
    const first = lines[0]!;
    if (i === 0 && /^WEBVTT(?:[ \t].*)?$/.test(first)) {
      // The header block may carry metadata lines and, in files missing the blank line after the header, the
      // first cue: keep it from its timing line.
      const at = lines.findIndex((l) => TIMING.test(l.trim()));
      if (at === -1) continue;
      lines.splice(0, at);
    }
    if (/^(NOTE|STYLE|REGION)(?:[ \t]|$)/.test(lines[0]!)) continue;
    let at = 0;
    let id: string | undefined;
    if (!lines[0]!.includes('-->')) {
      id = lines[0]!.trim();
      at = 1;
    }
    const timing = lines[at] === undefined ? null : TIMING.exec(lines[at]!.trim());
    if (!timing) continue;
    const start = parseTimestamp(timing[1]!);
    const end = parseTimestamp(timing[2]!);
    if (start === undefined || end === undefined) continue;
    const raw = lines.slice(at + 1).join('\n');
    const payload = cleanText(raw);
    if (!payload) continue;
    // A voice span (`<v Ana>`, `<v.loud Ana>`) names the speaker.
    const voice = /<v(?:\.[^\s>]*)?[ \t]+([^>\n]+)>/.exec(raw);
    const speaker = voice && cleanText(voice[1]!);
    cues.push({ start, end: Math.max(start, end), text: payload, ...(id && { id }), ...(speaker && { speaker }) });
  }
  return cues;
}

/** True when a caption file holds no words at all (empty, only a header, or only whitespace cues). */
export function isBlankCaptions(input: string): boolean {
  return parseVtt(input).length === 0;
}
