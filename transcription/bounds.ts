import fs from 'node:fs/promises';
import path from 'node:path';
import { PermanentError } from '../core/errors.js';
import type { TranscriptionConfig } from './configuration.js';

/**
 * The bounds on a job's media (docs/transcription.md, "Bounds on media"): how long it may be
 * (TRANSCRIPTION_MAX_DURATION_SECONDS) and how much its work folder may hold (TRANSCRIPTION_WORK_MAX_BYTES). Nothing
 * else bounds a job: a 2 GB upload of highly compressed audio is hundreds of hours, tens of gigabytes as the
 * 16 kHz WAV the backend takes. A job over a bound fails at once (a PermanentError, no retry) with a message that
 * starts with its stable code and names the setting that raises it.
 */
export interface MediaBounds {
  maxDurationSeconds: number;
  workMaxBytes: number;
}

export const mediaBounds = (t: Pick<TranscriptionConfig, 'maxDurationSeconds' | 'workMaxBytes'>): MediaBounds => ({
  maxDurationSeconds: t.maxDurationSeconds,
  workMaxBytes: t.workMaxBytes,
});

export const MEDIA_TOO_LONG = 'MEDIA_TOO_LONG';
export const WORK_FOLDER_TOO_LARGE = 'WORK_FOLDER_TOO_LARGE';

/** 16 kHz mono 16-bit: what a second of the converted audio takes. */
export const WAV_BYTES_PER_SECOND = 32_000;

/** `1:02:03`, `4:05`: a length people read. */
export function clockText(totalSeconds: number): string {
  const s = Math.round(totalSeconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

export function mediaTooLong(seconds: number | undefined, b: MediaBounds, how: string): PermanentError {
  const length = seconds === undefined ? 'longer than' : `${clockText(seconds)} long, over`;
  return new PermanentError(
    `${MEDIA_TOO_LONG}: the media is ${length} the longest a job takes, ${clockText(b.maxDurationSeconds)} (${how}); ` +
      `raise TRANSCRIPTION_MAX_DURATION_SECONDS (now ${b.maxDurationSeconds}) to transcribe it`,
    MEDIA_TOO_LONG,
  );
}

/** `bytes` undefined: over the bound by an amount not known (yt-dlp stopped a download at its size limit). */
export function workFolderTooLarge(bytes: number | undefined, b: MediaBounds, what: string): PermanentError {
  const mb = (n: number) => (n < 1024 * 1024 ? `${Math.ceil(n / 1024)} KB` : `${Math.ceil(n / (1024 * 1024))} MB`);
  const size = bytes === undefined ? 'over' : `to ${mb(bytes)}, over`;
  return new PermanentError(
    `${WORK_FOLDER_TOO_LARGE}: ${what} would take the job's work folder ${size} ${mb(b.workMaxBytes)}; ` +
      `raise TRANSCRIPTION_WORK_MAX_BYTES (now ${b.workMaxBytes}) to transcribe it`,
    WORK_FOLDER_TOO_LARGE,
  );
}

/** Bytes of every file under `dir` (0 when it is not there), but for those under a top-level folder `skip` names. */
export async function folderBytes(dir: string, skip: (folder: string) => boolean = () => false): Promise<number> {
  const names = await fs.readdir(dir, { recursive: true }).catch(() => [] as string[]);
  let total = 0;
  for (const name of names) {
    if (skip(name.split(path.sep)[0]!)) continue;
    const st = await fs.lstat(path.join(dir, name)).catch(() => undefined);
    if (st?.isFile()) total += st.size;
  }
  return total;
}

/**
 * Fails the job when the work folder, with `adding` more bytes for `what`, would hold more than the bound. `step`
 * and `attempt`: the step's folders of earlier attempts (`audio-1` when this is `audio-2`) are not counted, so a
 * retried step is not refused for what the attempt it replaces left behind.
 */
export async function checkWorkFolder(dir: string, b: MediaBounds, adding: number, what: string, current?: { step: string; folder: string }): Promise<void> {
  const superseded = (folder: string) => current !== undefined && folder.startsWith(`${current.step}-`) && folder !== current.folder;
  const total = (await folderBytes(dir, superseded)) + adding;
  if (total > b.workMaxBytes) throw workFolderTooLarge(total, b, what);
}

/** The `Duration: 01:02:03.45` line ffmpeg (and ffprobe) print for an input; undefined when it says `N/A`. */
export function parseDuration(stderr: string): number | undefined {
  const m = /Duration:\s*(\d+):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(stderr);
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : undefined;
}
