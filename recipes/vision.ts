import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../core/config.js';
import { PermanentError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Tools } from '../core/tools.js';
import type { OutboundGuard } from '../outbound/guard.js';
import { type CallContext, readBytes, request, statusFailure } from '../outbound/http.js';
import { runTool, ToolError } from '../transcription/media.js';
import type { PhaseStep } from './contract.js';
import type { RecipeItem } from './entities.js';
import type { ModelImage } from './llm.js';

/**
 * The pictures step of parsing (docs/recipes.md, "Pictures and frames"). With LLM_VISION=true the model gets the
 * post's pictures (its thumbnail and a carousel's pictures, fetched through the outbound guard, so a picture link
 * to an internal address is never read, and sent as data URLs, so the model never gets a link either) and a few
 * frames of its video (yt-dlp through the guard's proxy, then ffmpeg: the first frame and scene changes, scaled
 * down), at most RECIPE_VISION_MAX_IMAGES in all, RECIPE_VISION_MAX_FRAMES of them frames. Without it the step is
 * skipped and the phase says so. A picture that cannot be had is left out (logged); a video that is private or
 * removed fails the item for good, one that cannot be read for now is retried.
 */
export interface VisionDeps {
  config: Config;
  guard: OutboundGuard;
  tools: Tools;
  log: Logger;
}

export interface CollectedImages {
  images: ModelImage[];
  step: PhaseStep;
}

/** Frames are scaled to at most this width (and JPEG quality 5 of 31): a few tens of kilobytes each. */
const FRAME_WIDTH = 768;
/** A scene change is a frame this different from the one before (ffmpeg's `scene` score, 0 to 1). */
const SCENE_THRESHOLD = 0.3;
/** The video downloaded for frames: a small rendition, and never more than this. */
const MAX_VIDEO_BYTES = '200M';

/** yt-dlp failures that another attempt cannot fix (as transcription/media.ts tells them). */
const PERMANENT_VIDEO = /Unsupported URL|HTTP Error 4(0[0134]|10|51)|Video unavailable|Private video|This video is not available|login required|Sign in to confirm|members-only|has been removed|No video formats found|Requested format is not available/i;

export async function collectImages(deps: VisionDeps, o: { item: RecipeItem; dir: string }, ctx: CallContext): Promise<CollectedImages> {
  const r = deps.config.recipes;
  const now = new Date().toISOString();
  if (!r.vision) {
    return { images: [], step: { name: 'pictures', status: 'skipped', detail: 'Skipped: the model is not set to take images (LLM_VISION=false); it read the text only', completedAt: now } };
  }
  const x = o.item.extraction;
  const links = [...new Set([o.item.results.thumbnail, ...(x?.pictures ?? [])].filter((l): l is string => Boolean(l)))];
  const pictures: ModelImage[] = [];
  for (const link of links) {
    if (pictures.length >= r.visionMaxImages) break;
    const url = await picture(deps, link, ctx, o.item.jobId);
    if (url) pictures.push({ url, kind: 'picture' });
  }
  const room = Math.min(r.visionMaxFrames, r.visionMaxImages - pictures.length);
  const frames = x?.video && room > 0 ? await videoFrames(deps, o.item.url, path.join(o.dir, 'frames'), room, ctx) : [];
  const images = [...pictures, ...frames.map((url) => ({ url, kind: 'frame' as const }))];
  const detail = images.length
    ? `Sent ${pictures.length} picture${pictures.length === 1 ? '' : 's'} and ${frames.length} frame${frames.length === 1 ? '' : 's'} of the video to the model`
    : 'The post has no pictures or video frames to send; the model read the text only';
  return { images, step: { name: 'pictures', status: images.length ? 'completed' : 'skipped', detail, completedAt: now } };
}

/** One picture as a data URL, read through the outbound guard; undefined (logged) when it cannot be had. */
async function picture(deps: VisionDeps, link: string, ctx: CallContext, itemId: string): Promise<string | undefined> {
  const what = 'A picture of the post';
  try {
    const res = await request(what, link, { headers: { accept: 'image/*' } }, ctx, { guard: deps.guard });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw statusFailure(what, res, '');
    }
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!/^image\/(jpeg|png|webp|gif)$/.test(type)) throw new PermanentError(`${what} is not an image the model takes (${type || 'no type'})`);
    const bytes = await readBytes(what, res, ctx, deps.config.recipes.visionMaxImageBytes);
    return `data:${type};base64,${bytes.toString('base64')}`;
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    deps.log.warn('a picture of the post was left out', { itemId, error: (err as Error).message });
    return undefined;
  }
}

/**
 * Up to `count` frames of the post's video as JPEG data URLs: its first frame, then scene changes. They stay in the
 * run's folder (removed when the run ends), so parsing asked again after the speech step, or a retried attempt, does
 * not download the video again.
 */
async function videoFrames(deps: VisionDeps, url: string, dir: string, count: number, ctx: CallContext): Promise<string[]> {
  const done = path.join(dir, 'done');
  if (!(await fs.stat(done).catch(() => undefined))) {
    await extractFrames(deps, url, dir, count, ctx);
    await fs.writeFile(done, '');
  }
  const frames = (await fs.readdir(dir)).filter((f) => /^frame-\d+\.jpg$/.test(f)).sort().slice(0, count);
  const out: string[] = [];
  for (const f of frames) out.push(`data:image/jpeg;base64,${(await fs.readFile(path.join(dir, f))).toString('base64')}`);
  return out;
}

/** The video downloaded (yt-dlp through the guard's proxy), its frames written by ffmpeg, the video removed. */
async function extractFrames(deps: VisionDeps, url: string, dir: string, count: number, ctx: CallContext): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
  const run = { signal: ctx.signal, heartbeat: () => undefined, timeoutMs: Math.max(1000, ctx.deadline - Date.now() - 500) };
  let video: string | undefined;
  try {
    await deps.guard.checkUrl(url, 'The video');
    const ytdlp = await deps.tools.getYtDlp();
    const args = ['--ignore-config', '--no-playlist', '--no-color', '--no-warnings', '--no-progress', '--proxy', await deps.guard.proxyUrl(),
      '-f', 'best[height<=720]/best', '--max-filesize', MAX_VIDEO_BYTES, '-o', 'video.%(ext)s', '--', url];
    await runTool(ytdlp, args, { ...run, timeoutMs: Math.floor(run.timeoutMs * 0.7) }, { cwd: dir, env: { NO_PROXY: '', no_proxy: '' } });
    const name = (await fs.readdir(dir)).find((f) => f.startsWith('video.') && !f.endsWith('.part'));
    if (!name) throw new Error('yt-dlp finished without writing the video');
    video = path.join(dir, name);
    const ffmpeg = await deps.tools.getFfmpeg();
    await runTool(ffmpeg, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', '-i', video,
      '-vf', `select='eq(n\\,0)+gt(scene\\,${SCENE_THRESHOLD})',scale='min(${FRAME_WIDTH}\\,iw)':-2`, '-vsync', 'vfr',
      '-frames:v', String(count), '-q:v', '5', path.join(dir, 'frame-%02d.jpg')], run);
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    if (ctx.signal.aborted) throw err;
    if (err instanceof ToolError && PERMANENT_VIDEO.test(err.stderr)) throw new PermanentError(`The video's frames could not be read: ${err.message}`);
    if (err instanceof ToolError && err.tool === 'ffmpeg') throw new PermanentError(`The video's frames could not be read: ${err.message}`);
    throw err;
  }
  // The frames are kept; the video, up to 200 MB, is not.
  for (const f of await fs.readdir(dir)) if (f.startsWith('video.')) await fs.rm(path.join(dir, f), { force: true });
}
