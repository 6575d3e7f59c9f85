import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PermanentError } from '../core/errors.js';
import { redact } from '../core/redact.js';
import {
  ANALYSIS_FILTER,
  ANALYSIS_SECONDS,
  AUDIO_FILTERS,
  type AppliedAudioMode,
  type AudioMeasurement,
  type AudioMode,
  chooseMode,
  parseAnalysis,
} from './transcripts/audio.js';
import type { Tool } from '../core/tools.js';
import { type MediaBounds, mediaTooLong, parseDuration, workFolderTooLarge } from './bounds.js';

/**
 * The media steps of a transcription, on top of ffmpeg and yt-dlp (core/tools.ts). Every run is a child process
 * that the activity's signal kills (cancelled, or stopped for making no progress), heartbeating as it moves.
 */
export interface RunContext {
  signal: AbortSignal;
  /** The step moved: called on each line of progress a tool prints, and while it works the CPU. */
  heartbeat: (detail?: string) => void;
  timeoutMs: number;
  /** Saves what a retried attempt may resume from (it comes back as `resumeFrom`). */
  checkpoint?: (state: Record<string, unknown>) => void;
  resumeFrom?: Record<string, unknown>;
}

/**
 * At most `limit` holders at a time; the rest wait in order. A waiter whose signal aborts leaves the queue.
 * Bounds CPU-bound ffmpeg runs per worker process, so fifty jobs converting at once never starve the rest.
 */
export class Semaphore {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(readonly limit: number) {}

  /** `waiting` wraps the wait for a turn (the caller's heartbeats go on meanwhile: waiting is not hanging). */
  async run<T>(signal: AbortSignal, fn: () => Promise<T>, waiting: (turn: Promise<void>) => Promise<void> = (t) => t): Promise<T> {
    if (this.active >= this.limit) {
      await waiting(new Promise<void>((resolve, reject) => {
        const grant = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = this.queue.indexOf(grant);
          if (i !== -1) this.queue.splice(i, 1);
          reject(signal.reason ?? new Error('cancelled'));
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        this.queue.push(grant);
      }));
    } else {
      this.active++;
    }
    try {
      return await fn();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/** What a failed tool printed last: its own error messages, which say what went wrong. */
const STDERR_TAIL = 4000;

/** CPU time (user + system, in clock ticks) a process has used so far; undefined where /proc is not there. */
async function cpuTicks(pid: number | undefined): Promise<number | undefined> {
  if (!pid) return undefined;
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  // Fields after the command name (which may hold spaces, inside parentheses): utime and stime are the 12th and 13th.
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields ? Number(fields[11]) + Number(fields[12]) : undefined;
}

export async function runTool(
  tool: Tool,
  args: string[],
  ctx: RunContext,
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ stdout: string; stderr: string }> {
  if (ctx.signal.aborted) throw ctx.signal.reason ?? new Error('cancelled');
  return new Promise((resolve, reject) => {
    const child = spawn(tool.command, [...tool.args, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, ...tool.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const kill = () => child.kill('SIGKILL');
    const onAbort = () => kill();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    // Progress is what the tool prints (below), or CPU it keeps using (a quiet start-up, a long analysis): one that
    // only sleeps on a dead connection shows neither, and is stopped once that has lasted the heartbeat timeout.
    let ticks: number | undefined;
    const beat = setInterval(() => {
      void cpuTicks(child.pid).then((now) => {
        if (now !== undefined && ticks !== undefined && now > ticks) ctx.heartbeat();
        ticks = now;
      });
    }, 1000);
    const moved = (chunk: string) => {
      const line = chunk.trim().split('\n').at(-1)?.trim();
      ctx.heartbeat(line ? line.slice(0, 200) : undefined);
    };
    const deadline = setTimeout(() => {
      stderr += `\n(stopped after ${ctx.timeoutMs} ms)`;
      kill();
    }, ctx.timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      moved(s);
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
      moved(s);
      // Only the tail is kept for errors, but the analysis pass reads all of it.
      if (stderr.length > 64 * 1024 * 1024) stderr = stderr.slice(-STDERR_TAIL);
    });
    const done = () => {
      clearInterval(beat);
      clearTimeout(deadline);
      ctx.signal.removeEventListener('abort', onAbort);
    };
    child.on('error', (err) => {
      done();
      reject(err);
    });
    child.on('close', (code, signal) => {
      done();
      if (ctx.signal.aborted) return reject(ctx.signal.reason ?? new Error('cancelled'));
      if (code === 0) return resolve({ stdout, stderr });
      reject(new ToolError(tool.name, code, signal, stderr.slice(-STDERR_TAIL)));
    });
  });
}

export class ToolError extends Error {
  constructor(
    readonly tool: string,
    readonly code: number | null,
    readonly signalName: NodeJS.Signals | null,
    readonly stderr: string,
  ) {
    const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
    const errorLine = [...lines].reverse().find((l) => /^ERROR:|error|invalid|no such|unable/i.test(l)) ?? lines.at(-1) ?? '';
    super(redact(`${tool} failed (${code === null ? `signal ${signalName}` : `exit ${code}`}): ${errorLine}`.slice(0, 1000)));
    this.name = 'ToolError';
  }
}

/** yt-dlp failures that retrying cannot fix. */
const PERMANENT_YTDLP =
  /Unsupported URL|HTTP Error 4(0[0134]|10|51)|Video unavailable|Private video|This video is not available|is not a valid URL|login required|Sign in to confirm|members-only|has been removed|No video formats found|Requested format is not available/i;

function classifyYtDlp(err: unknown): never {
  if (err instanceof ToolError && PERMANENT_YTDLP.test(err.stderr)) throw new PermanentError(err.message);
  throw err;
}

/**
 * The options every yt-dlp call shares: one video, no config files, no colour, quiet but for errors; and every
 * connection through `proxy`, the outbound guard's (outbound/proxy.ts): the URL is a user's, so what yt-dlp reaches
 * (redirects and media hosts included) is only what the guard allows.
 */
const ytdlpCommon = (proxy: string) => ['--ignore-config', '--no-playlist', '--no-color', '--no-warnings', '--newline', '--proxy', proxy];
/** Reading a page: no download, so no progress to show. */
const ytdlpQuiet = (proxy: string) => [...ytdlpCommon(proxy), '--no-progress'];
/** Downloading: a progress line per update, the bytes so far (the heartbeats' details). */
const ytdlpDownload = (proxy: string) => [...ytdlpCommon(proxy), '--progress', '--progress-template', 'download:%(progress.downloaded_bytes)s bytes downloaded'];
/** yt-dlp hands its proxy to ffmpeg (some streams) in http_proxy: no NO_PROXY of the environment may exempt a host. */
const YTDLP_ENV = { NO_PROXY: '', no_proxy: '' };

export interface CaptionResult {
  /** The caption file's text; undefined when the site has none in the languages asked for. */
  vtt?: string;
  language?: string;
  /** The video's title from its metadata. */
  title?: string;
  /** Why there is no caption file although the page was read (e.g. an empty caption file: yt-dlp fails on it). */
  problem?: string;
}

/**
 * Captions of a video page, without downloading the video: manual subtitles first, automatic captions otherwise,
 * English preferred (`--sub-langs "en.*,en"`), as WebVTT; plus the video's metadata (for its title).
 */
export async function fetchCaptions(ytdlp: Tool, url: string, dir: string, ctx: RunContext & { proxy: string }): Promise<CaptionResult> {
  await fs.mkdir(dir, { recursive: true });
  let failure: unknown;
  try {
    await runTool(
      ytdlp,
      [
        ...ytdlpQuiet(ctx.proxy),
        '--skip-download',
        '--write-subs',
        '--write-auto-subs',
        '--sub-langs',
        'en.*,en',
        '--sub-format',
        'vtt',
        '--write-info-json',
        '--no-write-playlist-metafiles',
        '-o',
        'captions.%(ext)s',
        '--',
        url,
      ],
      ctx,
      { cwd: dir, env: YTDLP_ENV },
    );
  } catch (err) {
    failure = err;
  }
  const files = await fs.readdir(dir);
  let title: string | undefined;
  const info = files.find((f) => f.endsWith('.info.json'));
  // No metadata: the page itself could not be read. With metadata, only the captions failed (yt-dlp exits 1 on an
  // empty caption file, for one): the audio path takes over.
  if (failure && (!info || !(failure instanceof ToolError))) classifyYtDlp(failure);
  if (info) {
    try {
      const parsed = JSON.parse(await fs.readFile(path.join(dir, info), 'utf8')) as { title?: unknown };
      if (typeof parsed.title === 'string' && parsed.title.trim()) title = parsed.title.trim();
    } catch {
      /* metadata is a nicety */
    }
  }
  // captions.<lang>.vtt: prefer plain English, then any English variant (en-US, en-orig), then whatever is there.
  const vtts = files.filter((f) => /^captions\..+\.vtt$/.test(f)).sort();
  const rank = (f: string) => {
    const lang = f.slice('captions.'.length, -'.vtt'.length);
    return lang === 'en' ? 0 : lang.startsWith('en') ? 1 : 2;
  };
  const best = vtts.sort((a, b) => rank(a) - rank(b))[0];
  if (!best) return { ...(title && { title }), ...(failure instanceof Error && { problem: failure.message }) };
  return {
    vtt: await fs.readFile(path.join(dir, best), 'utf8'),
    language: best.slice('captions.'.length, -'.vtt'.length),
    ...(title && { title }),
  };
}

/**
 * Downloads the best audio of a video page (`bestaudio[ext=m4a]/bestaudio/best`); answers the file's path. The
 * bounds go to yt-dlp, which checks them before it downloads: `--match-filter "duration <=? N"` (a page that gives
 * no duration passes; ffmpeg measures it before conversion) and `--max-filesize`. A video it skips for them
 * writes nothing and exits 0: the job fails with MEDIA_TOO_LONG (skipped before the `before_dl` print, or a
 * duration over the bound) or WORK_FOLDER_TOO_LARGE (stopped after it).
 */
export async function downloadAudio(ytdlp: Tool, url: string, dir: string, ctx: RunContext & { proxy: string; bounds: MediaBounds }): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  const b = ctx.bounds;
  let stdout = '';
  try {
    ({ stdout } = await runTool(
      ytdlp,
      [
        ...ytdlpDownload(ctx.proxy),
        '-f', 'bestaudio[ext=m4a]/bestaudio/best',
        '--match-filter', `duration <=? ${b.maxDurationSeconds}`,
        '--max-filesize', String(b.workMaxBytes),
        '-o', 'media.%(ext)s',
        // What the page says, before the download (or the skip): the bound a skipped video is over.
        '--print', 'before_dl:gristmill-meta %(duration)s %(filesize,filesize_approx)s',
        '--print', 'after_move:filepath',
        '--', url,
      ],
      ctx,
      { cwd: dir, env: YTDLP_ENV },
    ));
  } catch (err) {
    classifyYtDlp(err);
  }
  const lines = stdout.trim().split('\n').filter(Boolean);
  const meta = lines.find((l) => l.startsWith('gristmill-meta '))?.split(' ');
  const printed = lines.filter((l) => !l.startsWith('gristmill-meta ')).at(-1);
  const file = printed ? path.resolve(dir, printed) : undefined;
  if (file && (await fs.stat(file).catch(() => undefined))?.isFile()) return file;
  const fallback = (await fs.readdir(dir)).find((f) => f.startsWith('media.') && !f.endsWith('.part'));
  if (!fallback) {
    const seconds = Number(meta?.[1]);
    const bytes = Number(meta?.[2]);
    if (Number.isFinite(seconds) && seconds > b.maxDurationSeconds) throw mediaTooLong(seconds, b, 'yt-dlp read it from the page before downloading');
    if (Number.isFinite(bytes) && bytes > b.workMaxBytes) throw workFolderTooLarge(bytes, b, 'the download');
    // Skipped by the duration filter: before the `before_dl` print. Stopped at --max-filesize: after it (the size is
    // often known only once the download starts).
    if (!meta) throw mediaTooLong(undefined, b, 'yt-dlp read it from the page and skipped the download');
    throw workFolderTooLarge(undefined, b, 'the download (yt-dlp stopped it at TRANSCRIPTION_WORK_MAX_BYTES)');
  }
  return path.join(dir, fallback);
}

/**
 * A playlist's or channel's entries as yt-dlp lists them without visiting each (`--flat-playlist -J`): the first
 * `end` entries (`--playlist-end`, so a channel of thousands is not paged through). Answers yt-dlp's JSON.
 */
export async function listPlaylist(ytdlp: Tool, url: string, dir: string, ctx: RunContext & { proxy: string; end: number }): Promise<unknown> {
  await fs.mkdir(dir, { recursive: true });
  const common = ytdlpQuiet(ctx.proxy).filter((a) => a !== '--no-playlist');
  let stdout = '';
  try {
    ({ stdout } = await runTool(ytdlp, [...common, '--yes-playlist', '--flat-playlist', '-J', '--playlist-end', String(ctx.end), '--', url], ctx, { cwd: dir, env: YTDLP_ENV }));
  } catch (err) {
    classifyYtDlp(err);
  }
  try {
    return JSON.parse(stdout) as unknown;
  } catch {
    throw new PermanentError(`yt-dlp listed the playlist in a form that is not JSON: ${stdout.slice(0, 200)}`);
  }
}

/**
 * How long the media is, from its header, without decoding it: what ffprobe reports, read by ffmpeg itself (the
 * packaged ffmpeg comes without ffprobe; both print the same `Duration:` line from libavformat). Undefined when the
 * header does not say (a browser recording's WebM often does not): the conversion is then capped instead.
 */
export async function probeDuration(ffmpeg: Tool, input: string, ctx: RunContext): Promise<number | undefined> {
  try {
    const { stderr } = await runTool(ffmpeg, ['-hide_banner', '-nostdin', '-i', input, '-t', '0', '-f', 'null', '-'], ctx);
    return parseDuration(stderr);
  } catch (err) {
    if (err instanceof ToolError) throw new PermanentError(`The media has no audio ffmpeg can read: ${err.message}`);
    throw err;
  }
}

/** ffmpeg prints `out_time_ms=...` (how far it got) to stdout twice a second: the heartbeats' details. */
const FFMPEG_PROGRESS = ['-progress', 'pipe:1'];

/** Measures loudness and noise floor (see transcription/transcripts/audio.ts). */
export async function analyzeAudio(ffmpeg: Tool, input: string, ctx: RunContext): Promise<AudioMeasurement> {
  const { stderr } = await runTool(
    ffmpeg,
    ['-hide_banner', '-nostats', '-nostdin', ...FFMPEG_PROGRESS, '-t', String(ANALYSIS_SECONDS), '-i', input, '-vn', '-af', ANALYSIS_FILTER, '-f', 'null', '-'],
    ctx,
  );
  return parseAnalysis(stderr);
}

export interface PreparedAudio {
  file: string;
  bytes: number;
  mode: AppliedAudioMode;
  reason: string;
  measurement?: AudioMeasurement;
}

/**
 * Turns any media into what the backend transcribes: 16 kHz mono 16-bit WAV, through the chosen mode's filters.
 * `auto` first measures the input, then picks a mode (transcription/transcripts/audio.ts).
 */
export async function prepareAudio(
  ffmpeg: Tool,
  input: string,
  output: string,
  mode: AudioMode,
  ctx: RunContext,
  /** Converts at most this many seconds: media whose header gave no length cannot fill the disk. */
  limitSeconds?: number,
): Promise<PreparedAudio> {
  let applied: AppliedAudioMode;
  let reason: string;
  let measurement: AudioMeasurement | undefined;
  if (mode === 'auto') {
    // An earlier attempt that measured already (its heartbeats said so) is not measured again.
    measurement = ctx.resumeFrom?.measurement as AudioMeasurement | undefined;
    if (!measurement) {
      try {
        measurement = await analyzeAudio(ffmpeg, input, ctx);
      } catch (err) {
        if (err instanceof ToolError) throw new PermanentError(`The media has no audio ffmpeg can read: ${err.message}`);
        throw err;
      }
      ctx.checkpoint?.({ measurement });
    }
    ({ mode: applied, reason } = chooseMode(measurement));
  } else {
    applied = mode;
    reason = 'requested';
  }
  const filter = AUDIO_FILTERS[applied];
  await fs.mkdir(path.dirname(output), { recursive: true });
  const partial = `${output}.part.wav`;
  try {
    await runTool(
      ffmpeg,
      ['-hide_banner', '-nostats', '-nostdin', '-loglevel', 'error', ...FFMPEG_PROGRESS, '-y', '-i', input, '-vn', '-sn', '-dn', ...(filter ? ['-af', filter] : []), ...(limitSeconds ? ['-t', String(limitSeconds)] : []), '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le',
        // A plain 44-byte WAV header: no metadata chunk some recognisers trip over.
        '-map_metadata', '-1', '-fflags', '+bitexact', '-flags:a', '+bitexact', '-f', 'wav', partial],
      ctx,
    );
  } catch (err) {
    await fs.rm(partial, { force: true });
    // ffmpeg refusing the input is about the file, not the moment: no retry.
    if (err instanceof ToolError) throw new PermanentError(`The media could not be converted: ${err.message}`);
    throw err;
  }
  await fs.rename(partial, output);
  const { size } = await fs.stat(output);
  if (size <= 44) throw new PermanentError('The media has no audio (the converted file is empty)');
  return { file: output, bytes: size, mode: applied, reason, ...(measurement && { measurement }) };
}
