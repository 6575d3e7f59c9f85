import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Tool } from '../core/tools.js';
import { type RunContext, runTool } from './media.js';
import { PLAYBACK_FILE } from './paths.js';

/** The playback copy's bitrate: speech stays clear in Opus at this rate (about 11 MB an hour). */
export const PLAYBACK_BITRATE = '24k';

/**
 * The job's audio as the web page plays it (docs/web.md, "Transcripts"): the converted 16 kHz mono audio in Opus
 * inside WebM, which every current browser plays and seeks in (the muxer writes its cues at the end). Written beside
 * the final name and renamed into place, so a reader never sees half a file and a retry's copy replaces the old.
 */
export async function writePlaybackCopy(ffmpeg: Tool, input: string, dir: string, ctx: RunContext): Promise<{ file: string; bytes: number }> {
  await fs.mkdir(dir, { recursive: true });
  const final = path.join(dir, PLAYBACK_FILE);
  const part = path.join(dir, `.${randomUUID()}.webm`);
  try {
    await runTool(ffmpeg, ['-hide_banner', '-nostdin', '-y', '-i', input, '-vn', '-ac', '1', '-c:a', 'libopus', '-b:a', PLAYBACK_BITRATE, '-application', 'voip', '-f', 'webm', part], ctx);
    await fs.rename(part, final);
  } finally {
    await fs.rm(part, { force: true });
  }
  return { file: final, bytes: (await fs.stat(final)).size };
}
