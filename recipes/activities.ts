import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import type { Config } from '../core/config.js';
import { PermanentError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Orm } from '../db/orm.js';
import { Job } from '../db/entities/job.js';
import { RecipeItem } from './entities.js';
import { type OutboundGuard, outboundGuard } from '../outbound/guard.js';
import { jobStopped, owns } from '../jobs/ownership.js';
import { removeWorkFolder } from '../jobs/work-folders.js';
import type { PushPayload } from '../push/service.js';
import {
  type ExtractOutcome,
  type ParseInput,
  type PhaseName,
  type PhaseStep,
  type QueueStatus,
  RECIPE_STATUSES,
  type RecipeEntry,
  type RecipeResults,
  type SpeechFailureInput,
  type StepInput,
} from './contract.js';
import { type ExtractionRecord, extractPost } from './extract.js';
import { type CallContext, readBytes, request, statusFailure } from '../outbound/http.js';
import { isNoRecipe, parseWithModel } from './llm.js';
import { llmEndpoint } from '../llm/chat.js';
import { type Created, createRecipe, findRecipe, type ManagerTarget, managerName, putImage } from './managers.js';
import { type Conversion, converts } from './language.js';
import { finishMealieRecipe } from './mealie-ingredients.js';
import { overallProgress, withPhase, withStep } from './phases.js';
import { recipeSpeechFailed, recipeSpeechFinish, recipeSpeechStart, speechPlan } from './speech.js';
import { collectImages } from './vision.js';
import type { SchemaRecipe } from './recipe.js';
import { type Tool, Tools } from '../core/tools.js';
import type { ActivityDeps } from '../activities/deps.js';
import { retryLater } from '../activities/retry-later.js';

/** Retry-After beyond this is not waited for in full: the next attempt comes after 5 minutes at the latest. */
const MAX_RETRY_AFTER_MS = 5 * 60_000;
/** After yt-dlp could not be found, it is looked for again after this long (a lookup may try to install it). */
const YTDLP_RECHECK_MS = 10 * 60_000;
const MAX_PICTURE_BYTES = 10 * 1024 * 1024;
const PICTURE_EXTENSIONS: Record<string, string> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp', 'image/gif': 'gif', 'image/avif': 'avif' };

/** What the steps are given: the worker's dependencies, and what the recipe queue makes of them once per worker. */
export interface RecipeDeps extends Pick<ActivityDeps, 'config' | 'orm' | 'jobs' | 'temporal'> {
  log: Logger;
  /** The post and its picture are users' URLs; the model and the recipe manager are the operator's. */
  guard: OutboundGuard;
  ytdlp: (ctx: CallContext) => Promise<Tool | undefined>;
  /** ffmpeg (and yt-dlp) for the video's frames. */
  tools: Tools;
}
/** What writing an item's phases takes. */
type Store = Pick<RecipeDeps, 'orm' | 'jobs'>;

export interface UploadOutcome {
  recipeManagerUrl: string;
  /** What the push notification says once the slot is given back. */
  notice: PushPayload;
}

export interface ParseOutcome {
  via: 'json-ld' | 'llm';
  mode?: string;
  /** The recipes' names, in the order of the post. */
  names: string[];
  /** The model found no recipe in the caption, and the video's speech may have one: the speech step comes next. */
  noRecipe?: string;
}

/** What a phase wrote when it completed. */
interface PhaseResult<T> {
  value: T;
  results?: RecipeResults;
  extraction?: ExtractionRecord;
  /** The last phase: the item is `success` in the same transaction. */
  final?: boolean;
  /** The phase is not done yet (the speech step comes next): it stays `in_progress`, its result written. */
  pause?: boolean;
  /** Steps of the phase to record with its completion. */
  steps?: PhaseStep[];
}

function stopped(): never {
  return jobStopped('item');
}

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The item's scratch folder, one per run: a run that ends removes its own, never a newer run's. */
const itemDir = (config: Config, itemId: string) => path.join(config.dataDir, 'tmp', 'recipes', itemId);
const runDir = (config: Config, itemId: string, runId: string) => path.join(itemDir(config, itemId), runId);

/** yt-dlp if it can be had in a moment; otherwise the page is read directly (and the lookup finishes meanwhile). */
function ytdlpLookup(tools: Tools, log: Logger): RecipeDeps['ytdlp'] {
  let missingUntil = 0;
  return async (ctx) => {
    if (Date.now() < missingUntil) return undefined;
    const wait = Math.max(500, Math.min(5000, (ctx.deadline - Date.now()) * 0.3));
    const lookup = tools.getYtDlp().catch((err: Error) => {
      missingUntil = Date.now() + YTDLP_RECHECK_MS;
      log.warn('yt-dlp is not available; posts are read from their pages only', { error: err.message.split('\n')[0] });
      return undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), wait);
    });
    try {
      return await Promise.race([lookup, late]);
    } finally {
      clearTimeout(timer);
    }
  };
}

function managerTarget({ recipes: r }: Config): ManagerTarget {
  if (!r.managerBaseUrl) throw new PermanentError('No recipe manager is configured: set RECIPE_MANAGER_BASE_URL (and RECIPE_MANAGER_TOKEN)');
  return { kind: r.manager, baseUrl: r.managerBaseUrl, publicUrl: r.managerPublicUrl ?? r.managerBaseUrl, token: r.managerToken, mealieGroup: r.mealieGroup };
}

async function loadItem(orm: Orm, itemId: string): Promise<{ job: Job; item: RecipeItem }> {
  const em = orm.em.fork();
  const job = await em.findOne(Job, { id: itemId });
  const item = job && (await em.findOne(RecipeItem, { jobId: itemId }));
  if (!job || !item) stopped();
  return { job, item };
}

/** Marks the phase in progress for this attempt; refuses when the run no longer owns the item. */
async function begin({ orm, jobs }: Store, input: StepInput, phase: PhaseName, attempt: number): Promise<RecipeItem> {
  const now = new Date().toISOString();
  const { changed } = await jobs.updateAsOwner(
    orm.em.fork(),
    { jobId: input.itemId, runId: input.runId },
    { stage: phase, stageDetail: attempt > 1 ? `attempt ${attempt}` : null, progress: overallProgress(phase, false) },
    {
      within: async (tx) => {
        const item = await tx.findOneOrFail(RecipeItem, { jobId: input.itemId });
        item.phases = withPhase(item.phases, phase, (p) => ({
          ...p,
          status: 'in_progress',
          startedAt: attempt > 1 ? (p.startedAt ?? now) : now,
          completedAt: undefined,
          progress: 0,
          attempts: attempt,
        }));
        await tx.flush();
      },
    },
  ).catch((err: unknown) => {
    if ((err as { code?: string }).code === 'JOB_NOT_FOUND') stopped();
    throw err;
  });
  if (!changed) stopped();
  return (await loadItem(orm, input.itemId)).item;
}

/** The phase's result, the phase `completed` and the item's progress (or `success`), in one transaction. */
async function complete({ orm, jobs }: Store, input: StepInput, phase: PhaseName, out: PhaseResult<unknown>): Promise<Job> {
  const now = new Date();
  const { job, changed } = await jobs.update(
    orm.em.fork(),
    input.itemId,
    (job) => {
      if (!owns(job, input.runId)) return null;
      if (out.pause) return { progress: overallProgress(phase, false), stageDetail: null };
      return out.final
        ? { status: RECIPE_STATUSES.done, progress: 100, stage: phase, stageDetail: null, error: null, completedAt: now }
        : { progress: overallProgress(phase, true), stageDetail: null };
    },
    {
      within: async (tx) => {
        const item = await tx.findOneOrFail(RecipeItem, { jobId: input.itemId });
        const phases = (out.steps ?? []).reduce((all, s) => withStep(all, phase, s), item.phases);
        item.phases = withPhase(phases, phase, (p) =>
          out.pause ? { ...p, progress: 50 } : { ...p, status: 'completed', completedAt: now.toISOString(), progress: 100 },
        );
        if (out.results) item.results = { ...item.results, ...out.results };
        if (out.extraction) item.extraction = out.extraction;
        await tx.flush();
      },
    },
  );
  if (!changed) stopped();
  return job;
}

/**
 * One attempt of a phase, in the running activity: begin, work within QUEUE_TIMEOUT_MS (heartbeating, so
 * cancellation arrives), complete.
 */
async function step<T>(
  deps: Store & Pick<RecipeDeps, 'log'>,
  input: StepInput,
  phase: PhaseName,
  work: (item: RecipeItem, ctx: CallContext) => Promise<PhaseResult<T>>,
): Promise<T> {
  const activity = Context.current();
  const { attempt } = activity.info;
  const item = await begin(deps, input, phase, attempt);
  const ctx: CallContext = { signal: activity.cancellationSignal, deadline: Date.now() + input.timeoutMs, setting: 'QUEUE_TIMEOUT_MS' };
  const beat = setInterval(() => activity.heartbeat(), Math.max(200, Math.min(2000, input.timeoutMs / 3)));
  let out: PhaseResult<T>;
  try {
    out = await work(item, ctx);
  } catch (err) {
    if (!ctx.signal.aborted) {
      deps.log.warn(`${phase} attempt failed`, { itemId: input.itemId, attempt, error: (err as Error).message, permanent: err instanceof PermanentError });
    }
    throw retryLater(err, MAX_RETRY_AFTER_MS);
  } finally {
    clearInterval(beat);
  }
  await complete(deps, input, phase, out);
  return out.value;
}

/** The push notification for an item that ended with `status`. */
function notice(job: Job, item: RecipeItem, status: QueueStatus): PushPayload {
  const common = { tag: `recipe:${job.id}`, data: { kind: 'recipe', itemId: job.id, status, postUrl: item.url, url: item.results.recipeManagerUrl ?? `/api/queue/${job.id}` } };
  if (status === 'success') {
    const names = (item.results.recipes ?? []).map((e) => e.recipe.name);
    const title = names.length > 1 ? `${names.length} recipes imported` : 'Recipe imported';
    return { title, body: truncate(names.length ? names.join(', ') : (item.results.recipe?.name ?? item.url), 200), ...common };
  }
  if (status === 'unhealthy') return { title: 'Recipe import interrupted', body: truncate(`${job.error ?? 'A service did not answer'} It can be retried.`, 240), ...common };
  return { title: 'Recipe not imported', body: truncate(job.error ?? 'The post could not be imported', 240), ...common };
}

/** yt-dlp writes its cookie jar back on exit: each attempt gets its own copy of RECIPE_COOKIES_FILE, removed after. */
async function withCookieJar<T>(source: string | undefined, dir: string, use: (jar: string | undefined) => Promise<T>): Promise<T> {
  if (!source) return use(undefined);
  await fs.mkdir(dir, { recursive: true });
  const jar = path.join(dir, `cookies-${process.pid}-${Date.now()}.txt`);
  try {
    await fs.copyFile(source, jar).catch((err: Error) => {
      throw new PermanentError(`RECIPE_COOKIES_FILE cannot be read: ${err.message}`);
    });
    return await use(jar);
  } finally {
    await fs.rm(jar, { force: true });
  }
}

/**
 * Extraction: the post's text, title and picture (recipes/extract.ts), its video and pictures, and whether the
 * video's speech is to be transcribed (recipes/speech.ts): then the phase completes after the speech step.
 */
async function recipeExtract(deps: RecipeDeps, input: StepInput): Promise<ExtractOutcome> {
  const { config, guard, log } = deps;
  return step<ExtractOutcome>(deps, input, 'extraction', (item, ctx) =>
    withCookieJar(config.recipes.cookiesFile, runDir(config, input.itemId, input.runId), async (cookiesFile) => {
      const x = await extractPost(item.url, { ...ctx, ytdlp: await deps.ytdlp(ctx), guard, cookiesFile, log });
      const speech = speechPlan(config.recipes.speech, x);
      return {
        value: { via: x.via, chars: x.text.length, ...(speech && { speech }) },
        results: { extractedText: x.text, ...(x.thumbnail && { thumbnail: x.thumbnail }) },
        extraction: {
          via: x.via,
          ...(x.title && { title: x.title }),
          ...(x.extractor && { extractor: x.extractor }),
          ...(x.structured && { structured: x.structured }),
          ...(x.video && { video: x.video }),
          ...(x.pictures && { pictures: x.pictures }),
        },
        pause: speech === 'now',
      };
    }),
  );
}

/** The text the model reads: the caption, and the video's speech when it was transcribed. */
function modelText(results: RecipeResults): string | undefined {
  const text = results.extractedText;
  if (!results.transcript) return text;
  return `${text ?? ''}\n\nSpoken in the video (transcribed):\n${results.transcript}`.trim();
}

/** The language and units the item's recipes are written in: its own, else RECIPE_LANGUAGE and RECIPE_UNITS. */
function conversionFor(item: RecipeItem, r: Config['recipes']): Conversion {
  const language = item.options?.language ?? r.language;
  return { ...(language && { language }), units: item.options?.units ?? r.units };
}

/** The recipes of the post as the item's results: every one, and the first as `recipe` (as before several). */
const parsed = (recipes: SchemaRecipe[]): RecipeResults => ({ recipe: recipes[0]!, recipes: recipes.map((recipe) => ({ recipe })) });

/** Parsing: the page's own schema.org Recipes when it had them, else the language model (recipes/llm.ts). */
async function recipeParse(deps: RecipeDeps, input: ParseInput): Promise<ParseOutcome> {
  const r = deps.config.recipes;
  return step<ParseOutcome>(deps, input, 'parsing', async (item, ctx) => {
    const x = item.extraction;
    const text = modelText(item.results);
    if (!x || !text) throw new PermanentError('Nothing to parse: extraction stored no text');
    // An extraction stored before pages could hold several recipes has one.
    const structured = x.structured && (Array.isArray(x.structured) ? x.structured : [x.structured as SchemaRecipe]);
    const conversion = conversionFor(item, r);
    const change = converts(conversion);
    // A page's own recipes are used as they are, unless they are to be translated or converted: then the model reads them too.
    if (structured?.length && !change) return { value: { via: 'json-ld', names: structured.map((s) => s.name) }, results: parsed(structured) };
    const endpoint = llmEndpoint(deps.config);
    const pictures = await collectImages(deps, { item, dir: runDir(deps.config, input.itemId, input.runId) }, ctx);
    let answer;
    try {
      answer = await parseWithModel(
        endpoint,
        { url: item.url, title: x.title, text, thumbnail: item.results.thumbnail, ...(change && { conversion }), ...(pictures.images.length && { images: pictures.images }) },
        ctx,
      );
    } catch (err) {
      // No recipe in the caption: the video's speech may hold it (the speech step, then parsing again).
      if (!isNoRecipe(err) || !input.speechFallback) throw err;
      deps.log.info("no recipe in the caption; the video's speech is transcribed", { itemId: input.itemId, reason: (err as Error).message });
      return { value: { via: 'llm', names: [], noRecipe: (err as Error).message }, pause: true, steps: [pictures.step] };
    }
    if (answer.skipped) deps.log.warn('the model answered recipes with no name or nothing to cook from; left out', { itemId: input.itemId, skipped: answer.skipped });
    const results = { ...parsed(answer.recipes), ...(change && { conversion }) };
    return { value: { via: 'llm', mode: answer.mode, names: answer.recipes.map((s) => s.name) }, results, steps: [pictures.step] };
  });
}

/**
 * Uploading: each recipe of the post to Mealie or Tandoor, in order, then the pictures (best effort, in what is left
 * of the attempt's time: a recipe is never failed for its picture). Each created slug or id is remembered on the
 * item as soon as the manager answers, and an attempt that finds it there does not create that recipe again; the
 * item is `success`, with `recipeManagerUrl` (the first's) and every link in `recipes`, in the same transaction as
 * the phase's completion. A run that already finished this way answers what it did (Temporal retrying an activity
 * whose completion was lost).
 */
async function recipeUpload(deps: RecipeDeps, input: StepInput): Promise<UploadOutcome> {
  const before = await loadItem(deps.orm, input.itemId);
  if (before.job.status === RECIPE_STATUSES.done && before.job.runId === input.runId && before.item.results.recipeManagerUrl) {
    return { recipeManagerUrl: before.item.results.recipeManagerUrl, notice: notice(before.job, before.item, 'success') };
  }
  // An earlier attempt of this run began uploading and did not finish: it may have created the recipe it was at.
  const interrupted = before.item.phases.some((p) => p.name === 'uploading' && p.status === 'in_progress');
  const url = await step(deps, input, 'uploading', async (item, ctx) => {
    const target = managerTarget(deps.config);
    const sameManager = item.manager === target.kind;
    const entries = (item.results.recipes ?? (item.results.recipe ? [{ recipe: item.results.recipe }] : [])).map((e) =>
      sameManager ? e : { recipe: e.recipe },
    );
    if (!entries.length) throw new PermanentError('Nothing to upload: parsing stored no recipe');
    // A translated or converted recipe keeps the post's own text in its notes.
    const original = item.results.conversion ? item.results.extractedText : undefined;
    const firstMissing = entries.findIndex((e) => !e.managerRecipeId || !e.recipeManagerUrl);
    for (let i = firstMissing; i >= 0 && i < entries.length; i++) {
      const e = entries[i]!;
      if (e.managerRecipeId && e.recipeManagerUrl) continue;
      // A retried item may have recipes its earlier run created (before the manager refused the next one, say).
      const lookFirst = (interrupted && i === firstMissing) || item.runs > 1;
      const linked = new Set(entries.map((x) => x.managerRecipeId).filter((id): id is string => Boolean(id)));
      const created = await createOnce(deps, input, { target, recipe: e.recipe, index: i, lookFirst, linked, original }, ctx);
      entries[i] = { ...e, managerRecipeId: created.id, recipeManagerUrl: created.url };
    }
    if (target.kind === 'mealie') {
      for (const e of entries) await finishInMealie(deps, target, e, original, ctx, input.itemId);
    }
    for (const e of entries) {
      const picture = entries.length > 1 ? (e.recipe.image ?? item.results.thumbnail) : item.results.thumbnail;
      if (picture) await attachPicture(deps, target, e.managerRecipeId!, picture, { ...ctx, deadline: ctx.deadline - 250 }, input.itemId);
    }
    const link = entries[0]!.recipeManagerUrl!;
    return { value: link, results: { recipeManagerUrl: link, recipes: entries }, final: true };
  });
  const after = await loadItem(deps.orm, input.itemId);
  return { recipeManagerUrl: url, notice: notice(after.job, after.item, 'success') };
}

interface CreateInput {
  target: ManagerTarget;
  recipe: SchemaRecipe;
  /** Its place in `results.recipes`. */
  index: number;
  /** Look the recipe up in the manager before creating it (an earlier attempt or run may have created it). */
  lookFirst: boolean;
  /** Recipes already linked to this item's other entries: never found again for this one. */
  linked: ReadonlySet<string>;
  /** The post's own text, for the recipe's notes (a translated or converted recipe). */
  original: string | undefined;
}

/**
 * The recipe created in the manager (or the one an earlier attempt created), remembered on the item's entry at once:
 * if the rest of this attempt fails, the next one links this recipe, not a duplicate.
 */
async function createOnce(
  { orm, jobs, log }: Store & Pick<RecipeDeps, 'log'>,
  input: StepInput,
  { target, recipe, index, lookFirst, linked, original }: CreateInput,
  ctx: CallContext,
): Promise<Created> {
  const found = lookFirst ? await findRecipe(target, recipe, ctx, linked) : undefined;
  const created = found ?? (await createRecipe(target, recipe, ctx, { original }));
  log.info(found ? 'recipe found, created by an earlier attempt' : 'recipe created', { itemId: input.itemId, manager: target.kind, id: created.id, index });
  await jobs.updateAsOwner(
    orm.em.fork(),
    { jobId: input.itemId, runId: input.runId },
    { stageDetail: `Created in ${managerName(target.kind)}: ${created.id}` },
    {
      silent: true,
      within: async (tx) => {
        const row = await tx.findOneOrFail(RecipeItem, { jobId: input.itemId });
        const stored = row.results.recipes ?? (row.results.recipe ? [{ recipe: row.results.recipe }] : []);
        const kept = row.manager === target.kind ? stored : stored.map((e) => ({ recipe: e.recipe }));
        const recipes = kept.map((e, i) => (i === index ? { ...e, managerRecipeId: created.id, recipeManagerUrl: created.url } : e));
        row.manager = target.kind;
        if (index === 0) row.managerRecipeId = created.id;
        row.results = { ...row.results, recipes, ...(index === 0 && { recipeManagerUrl: created.url }) };
        await tx.flush();
      },
    },
  );
  return created;
}

/**
 * A Mealie recipe finished (recipes/mealie-ingredients.ts): its ingredients as quantity, unit and food, and the
 * post's own text as a note when the recipe was translated or converted. Done again on every attempt (the same
 * result: foods and units are found by name). A recoverable failure fails the attempt, whose next one links the
 * recipe created, not a new one; Mealie's parser or its patch failing for good (a Mealie without the parser, say)
 * leaves the ingredients as notes, as Mealie's own import does, and is logged.
 */
async function finishInMealie(
  { log }: Pick<RecipeDeps, 'log'>,
  target: ManagerTarget,
  e: RecipeEntry,
  original: string | undefined,
  ctx: CallContext,
  itemId: string,
): Promise<void> {
  try {
    const { notes, parserFailure } = await finishMealieRecipe(target, e.managerRecipeId!, { lines: e.recipe.recipeIngredient, original }, ctx);
    if (parserFailure) log.warn('the recipe keeps its ingredients as notes', { itemId, id: e.managerRecipeId, error: parserFailure });
    else if (notes) log.info('ingredients Mealie could not parse stay notes', { itemId, id: e.managerRecipeId, notes });
  } catch (err) {
    // The recipe exists and is linked: a Mealie that refuses the patch for good leaves it as its import made it.
    if (!(err instanceof PermanentError)) throw err;
    log.warn('the recipe was imported as Mealie made it, without parsed ingredients or the original text', { itemId, id: e.managerRecipeId, error: err.message });
  }
}

/** The post's picture (a URL the post named) to the recipe created; failures are logged, never thrown. */
async function attachPicture(
  { guard, log }: Pick<RecipeDeps, 'guard' | 'log'>,
  target: ManagerTarget,
  id: string,
  picture: string,
  ctx: CallContext,
  itemId: string,
): Promise<boolean> {
  const what = 'The post picture';
  try {
    const res = await request(what, picture, { headers: { accept: 'image/*' } }, ctx, { guard });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw statusFailure(what, res, '');
    }
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!type.startsWith('image/')) throw new PermanentError(`${what} is not an image (${type || 'no type'})`);
    const bytes = await readBytes(what, res, ctx, MAX_PICTURE_BYTES);
    await putImage(target, id, { bytes, contentType: type, extension: PICTURE_EXTENSIONS[type] ?? 'jpg' }, ctx);
    return true;
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    log.warn('the recipe was imported without the post picture', { itemId, error: (err as Error).message });
    return false;
  }
}

export interface FailInput {
  itemId: string;
  runId: string;
  status: 'error' | 'unhealthy';
  error: string;
}

/**
 * Ends the run `error` (permanent) or `unhealthy` (recoverable, attempts used up) with its message; the phase
 * that was running is marked `error` with it (recipes/kind.ts). Answers the push notification to send, or null
 * when the run no longer owns the item.
 */
async function recipeFail({ orm, jobs }: Store, input: FailInput): Promise<PushPayload | null> {
  let update: { job: Job; changed: boolean };
  try {
    update = await jobs.updateAsOwner(orm.em.fork(), { jobId: input.itemId, runId: input.runId }, () => ({
      status: input.status,
      error: input.error,
      completedAt: new Date(),
    }));
  } catch (err) {
    if ((err as { code?: string }).code === 'JOB_NOT_FOUND') return null;
    throw err;
  }
  const { job } = update;
  // A retried attempt whose first try wrote the ending: the same answer.
  if (!update.changed && !(job.runId === input.runId && job.status === input.status)) return null;
  const item = await orm.em.fork().findOne(RecipeItem, { jobId: input.itemId });
  return item ? notice(job, item, input.status) : null;
}

/** Whatever the run's attempts left in DATA_DIR/tmp/recipes/<itemId>/<runId> (a cookie jar) goes when it ends. */
async function recipeCleanup({ config }: Pick<RecipeDeps, 'config'>, input: { itemId: string; runId?: string }): Promise<void> {
  if (!input.runId) return fs.rm(itemDir(config, input.itemId), { recursive: true, force: true });
  await removeWorkFolder(runDir(config, input.itemId, input.runId));
}

/**
 * The recipe pipeline's steps (recipes/workflow.ts runs them). Each phase activity marks its phase
 * `in_progress` when an attempt starts (with the attempt number), does its work within QUEUE_TIMEOUT_MS, and
 * writes its result, the phase `completed` and the item's progress in one transaction with the `queue-update`
 * event. Work is read from and written to the item's row, so a retried attempt starts from what is stored and
 * Temporal's history stays small. Each step takes the dependencies it uses; this binds them once per worker.
 */
export function createRecipeActivities(activityDeps: ActivityDeps) {
  const { config, orm, jobs } = activityDeps;
  const log = activityDeps.log.child('recipes');
  const tools = new Tools(log.child('tools'), { ytdlpPath: config.transcription.ytdlpPath, ffmpegPath: config.transcription.ffmpegPath });
  const deps: RecipeDeps = { config, orm, jobs, log, temporal: activityDeps.temporal, guard: outboundGuard(config), ytdlp: ytdlpLookup(tools, log), tools };
  return {
    recipeExtract: (input: StepInput) => recipeExtract(deps, input),
    recipeParse: (input: ParseInput) => recipeParse(deps, input),
    recipeSpeechStart: (input: StepInput) => recipeSpeechStart(deps, input),
    recipeSpeechFinish: (input: StepInput & { jobId: string }) => recipeSpeechFinish(deps, input),
    recipeSpeechFailed: (input: SpeechFailureInput) => recipeSpeechFailed(deps, input),
    recipeUpload: (input: StepInput) => recipeUpload(deps, input),
    recipeFail: (input: FailInput) => recipeFail(deps, input),
    recipeCleanup: (input: { itemId: string; runId?: string }) => recipeCleanup(deps, input),
  };
}
export type RecipeActivities = ReturnType<typeof createRecipeActivities>;
