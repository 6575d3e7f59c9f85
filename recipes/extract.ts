import { spawn } from 'node:child_process';
import { PermanentError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { redact } from '../core/redact.js';
import type { OutboundGuard } from '../outbound/guard.js';
import type { Tool } from '../core/tools.js';
import { findRecipeNodes, readPage } from './html.js';
import { type CallContext, readText, request, statusFailure } from '../outbound/http.js';
import { fromJsonLd, MAX_RECIPES, recipeText, type SchemaRecipe } from './recipe.js';

/**
 * The extraction phase: the post's text (its caption), title and picture.
 *
 * 1. yt-dlp's metadata (`-J --skip-download`) when one of its site extractors takes the URL (Instagram, TikTok,
 *    YouTube, Facebook, ...): `description` is the caption. Its generic extractor is left out
 *    (`--use-extractors default,-generic`): on an ordinary page it would read the same meta tags as step 2 and miss
 *    a structured recipe, and it follows embedded players, so a blog's YouTube embed would replace the post's text
 *    with the video's description.
 * 2. Otherwise the page itself: the schema.org Recipes in its JSON-LD (also inside `@graph`; a page may hold several)
 *    are the recipes as the author structured them, and parsing then needs no language model; else the Open Graph / Twitter / meta
 *    description (social sites put the caption there); else the page's visible text.
 *
 * Nothing readable is a permanent failure ("no text in the post"), and so are pages that answer 4xx or are not
 * HTML. Network failures, timeouts and 5xx are recoverable. The post's URL is a user's: it is checked by the outbound
 * guard before yt-dlp runs, and yt-dlp and the page's fetch connect only where the guard allows (a refusal is
 * permanent). An error page's body is never quoted: it could be a page from inside the network.
 */
export interface Extracted {
  via: 'yt-dlp' | 'json-ld' | 'meta' | 'text';
  /** The post's text: what parsing reads, and `results.extractedText`. */
  text: string;
  title?: string;
  thumbnail?: string;
  /** yt-dlp's extractor, when it was yt-dlp. */
  extractor?: string;
  /** The schema.org Recipes found on the page (one or more, in page order; at most MAX_RECIPES). */
  structured?: SchemaRecipe[];
  /** The post has a video (yt-dlp's metadata says so), and its length when known. */
  video?: { seconds?: number };
  /** The post's pictures (a carousel's, from yt-dlp's metadata), at most MAX_PICTURES; the thumbnail is not repeated. */
  pictures?: string[];
}

/** What extraction keeps for parsing beyond the text (the item's `extraction` column). */
export type ExtractionRecord = Pick<Extracted, 'via' | 'title' | 'extractor' | 'structured' | 'video' | 'pictures'>;

/** The pictures of a carousel kept (more than a model is ever sent). */
const MAX_PICTURES = 20;

/** The longest text kept (a caption is far shorter; a page's text is cut). */
export const MAX_TEXT = 20_000;
const MIN_PAGE_TEXT = 40;

export interface ExtractOptions extends CallContext {
  /** undefined: yt-dlp is not available; the page is read directly. */
  ytdlp: Tool | undefined;
  guard: OutboundGuard;
  cookiesFile?: string | undefined;
  log: Logger;
}

export async function extractPost(url: string, o: ExtractOptions): Promise<Extracted> {
  await o.guard.checkUrl(url, 'The post');
  let ytdlpProblem: string | undefined;
  if (o.ytdlp) {
    // yt-dlp gets at most 60% of the attempt's time, so a hanging site extractor leaves time for the page.
    const budget = Math.floor((o.deadline - Date.now()) * 0.6);
    const meta = await ytdlpMetadata(o.ytdlp, url, { ...o, deadline: Date.now() + budget });
    if (meta.kind === 'ok') {
      const text = meta.info.description?.trim();
      if (text) {
        return {
          via: 'yt-dlp',
          text: text.slice(0, MAX_TEXT),
          ...(meta.info.title && { title: meta.info.title }),
          ...(meta.info.thumbnail && { thumbnail: meta.info.thumbnail }),
          ...(meta.info.extractor && { extractor: meta.info.extractor }),
          ...(meta.info.video && { video: meta.info.video }),
          ...(meta.info.pictures?.length && { pictures: meta.info.pictures }),
        };
      }
      ytdlpProblem = `yt-dlp (${meta.info.extractor ?? 'its extractor'}) found no caption`;
    } else if (meta.kind === 'failed') {
      ytdlpProblem = meta.reason;
      o.log.debug('yt-dlp could not read the post; reading the page', { url, reason: meta.reason });
    }
  }
  try {
    return await fromPage(url, o);
  } catch (err) {
    if (err instanceof PermanentError && ytdlpProblem) throw new PermanentError(`${err.message} (and ${ytdlpProblem})`);
    throw err;
  }
}

async function fromPage(url: string, o: ExtractOptions): Promise<Extracted> {
  const what = 'The post';
  const ctx: CallContext = { signal: o.signal, deadline: o.deadline, setting: 'QUEUE_TIMEOUT_MS' };
  const res = await request(what, url, { headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5', 'user-agent': USER_AGENT } }, ctx, { guard: o.guard });
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw statusFailure(what, res, '');
  }
  const type = (res.headers.get('content-type') ?? 'text/html').toLowerCase();
  if (!/html|xml/.test(type)) {
    await res.body?.cancel().catch(() => undefined);
    throw new PermanentError(`The URL is not a web page (${type.split(';')[0]}); send the link of the post`);
  }
  const page = readPage(await readText(what, res, ctx));
  const m = (k: string) => page.meta.get(k);
  const title = m('og:title') ?? m('twitter:title') ?? page.title;
  const thumbnail = absolute(m('og:image') ?? m('og:image:url') ?? m('og:image:secure_url') ?? m('twitter:image'), res.url || url);
  const base = { ...(title && { title }), ...(thumbnail && { thumbnail }) };

  const structured = findRecipeNodes(page.jsonLd)
    .map((node) => fromJsonLd(node, { url, thumbnail }))
    .filter((r): r is SchemaRecipe => Boolean(r))
    .slice(0, MAX_RECIPES);
  if (structured.length) {
    const text = structured.map(recipeText).join('\n\n---\n\n').slice(0, MAX_TEXT);
    return { via: 'json-ld', text, structured, ...base, ...(!thumbnail && structured[0]!.image && { thumbnail: structured[0]!.image }) };
  }

  const caption = m('og:description') ?? m('twitter:description') ?? m('description');
  if (caption?.trim()) return { via: 'meta', text: caption.trim().slice(0, MAX_TEXT), ...base };
  if (page.text.length >= MIN_PAGE_TEXT) return { via: 'text', text: page.text.slice(0, MAX_TEXT), ...base };
  throw new PermanentError('No text in the post: the page has no caption, description or recipe to read');
}

function absolute(link: string | undefined, base: string): string | undefined {
  if (!link) return undefined;
  try {
    const u = new URL(link, base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : undefined;
  } catch {
    return undefined;
  }
}

export const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36 Gristmill/0.1';

interface YtDlpInfo {
  title?: string;
  description?: string;
  thumbnail?: string;
  extractor?: string;
  video?: { seconds?: number };
  pictures?: string[];
}

const VIDEO_EXTENSIONS = /^(mp4|webm|mov|mkv|m4v|flv|3gp)$/i;
const IMAGE_EXTENSIONS = /^(jpe?g|png|webp|heic|avif|gif)$/i;

/**
 * Whether yt-dlp's metadata is a video's (a duration, a video codec, a video container) and its length; a
 * carousel's entries count when one of them is.
 */
function videoOf(info: Record<string, unknown>, entries: Record<string, unknown>[]): YtDlpInfo['video'] {
  const one = (e: Record<string, unknown>) => {
    const seconds = typeof e.duration === 'number' && e.duration > 0 ? e.duration : undefined;
    const isVideo = seconds !== undefined || (typeof e.vcodec === 'string' && e.vcodec !== 'none') || (typeof e.ext === 'string' && VIDEO_EXTENSIONS.test(e.ext));
    return isVideo ? { ...(seconds !== undefined && { seconds }) } : undefined;
  };
  return one(info) ?? entries.map(one).find(Boolean);
}

/** A carousel's pictures: its entries that are images (their URL or thumbnail), in order. */
function picturesOf(entries: Record<string, unknown>[], thumbnail: string | undefined): string[] {
  const out: string[] = [];
  for (const e of entries) {
    const isImage = typeof e.ext === 'string' && IMAGE_EXTENSIONS.test(e.ext);
    const link = isImage && typeof e.url === 'string' ? e.url : typeof e.thumbnail === 'string' ? e.thumbnail : undefined;
    if (link && /^https?:\/\//i.test(link) && link !== thumbnail && !out.includes(link)) out.push(link);
  }
  return out.slice(0, MAX_PICTURES);
}
type Metadata = { kind: 'ok'; info: YtDlpInfo } | { kind: 'unsupported' } | { kind: 'failed'; reason: string };

/** yt-dlp failures that say the site needs a logged-in session: a hint about RECIPE_COOKIES_FILE helps. */
const LOGIN = /login required|log in|sign in|rate-limit reached|cookies/i;

/** `yt-dlp -J --skip-download` with site extractors only; killed when the attempt ends or is cancelled. */
async function ytdlpMetadata(tool: Tool, url: string, o: ExtractOptions): Promise<Metadata> {
  const args = [
    '--ignore-config', '--no-playlist', '--no-color', '--no-warnings', '--use-extractors', 'default,-generic',
    '--socket-timeout', String(Math.max(1, Math.ceil((o.deadline - Date.now()) / 1000))),
    '-J', '--skip-download',
    '--proxy', await o.guard.proxyUrl(),
    ...(o.cookiesFile ? ['--cookies', o.cookiesFile] : []),
    '--', url,
  ];
  const run = await runCapture(tool, args, o);
  if (run.aborted) throw o.signal.reason ?? new Error('cancelled');
  if (run.timedOut) return { kind: 'failed', reason: 'yt-dlp did not finish in its share of QUEUE_TIMEOUT_MS' };
  if (run.code === 0) {
    try {
      const info = JSON.parse(run.stdout) as Record<string, unknown>;
      const s = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
      const first = Array.isArray(info.entries) ? (info.entries[0] as Record<string, unknown> | undefined) : undefined;
      const src = s(info.description) ? info : (first ?? info);
      const entries = Array.isArray(info.entries) ? (info.entries as unknown[]).filter((e): e is Record<string, unknown> => Boolean(e) && typeof e === 'object') : [];
      const thumbnail = s(src.thumbnail ?? info.thumbnail);
      const video = videoOf(info, entries);
      const pictures = picturesOf(entries, thumbnail);
      return {
        kind: 'ok',
        info: {
          ...(s(src.title) && { title: s(src.title) }),
          ...(s(src.description) && { description: s(src.description) }),
          ...(s(src.thumbnail ?? info.thumbnail) && { thumbnail: s(src.thumbnail ?? info.thumbnail) }),
          ...(s(info.extractor_key ?? info.extractor) && { extractor: s(info.extractor_key ?? info.extractor) }),
          ...(video && { video }),
          ...(pictures.length && { pictures }),
        },
      };
    } catch {
      return { kind: 'failed', reason: 'yt-dlp printed no metadata' };
    }
  }
  const error = run.stderr.split('\n').map((l) => l.trim()).filter((l) => /^ERROR:/.test(l)).at(-1) ?? run.stderr.trim().split('\n').at(-1) ?? '';
  if (/Unsupported URL|No suitable extractor/i.test(error)) return { kind: 'unsupported' };
  const hint = LOGIN.test(error) && !o.cookiesFile ? ' (the site wants a logged-in session: set RECIPE_COOKIES_FILE)' : '';
  return { kind: 'failed', reason: redact(`yt-dlp failed: ${error.replace(/^ERROR:\s*/, '')}`.slice(0, 500)) + hint };
}

interface Captured {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
}

function runCapture(tool: Tool, args: string[], ctx: CallContext): Promise<Captured> {
  return new Promise((resolve) => {
    if (ctx.signal.aborted) return resolve({ code: null, stdout: '', stderr: '', timedOut: false, aborted: true });
    const child = spawn(tool.command, [...tool.args, ...args], { env: { ...process.env, ...tool.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const kill = () => child.kill('SIGKILL');
    const onAbort = () => kill();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, Math.max(0, ctx.deadline - Date.now()));
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      if (stdout.length < 32 * 1024 * 1024) stdout += s;
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr = (stderr + s).slice(-8000);
    });
    const done = () => {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
    };
    child.on('error', (err) => {
      done();
      resolve({ code: -1, stdout: '', stderr: `ERROR: yt-dlp could not start: ${err.message}`, timedOut: false, aborted: ctx.signal.aborted });
    });
    child.on('close', (code) => {
      done();
      resolve({ code, stdout, stderr, timedOut, aborted: ctx.signal.aborted });
    });
  });
}
