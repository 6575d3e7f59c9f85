import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { PermanentError } from '../core/errors.js';
import { Job } from '../db/entities/job.js';
import { RecipeItem } from './entities.js';
import { outboundGuard } from '../outbound/guard.js';
import { jobStopped, owns } from '../jobs/ownership.js';
import { removeWorkFolder } from '../jobs/work-folders.js';
import type { PushPayload } from '../push/service.js';
import {
  type PhaseName,
  type QueueStatus,
  RECIPE_STATUSES,
  type RecipeResults,
  type StepInput,
} from './contract.js';
import { type Extracted, extractPost } from './extract.js';
import { type CallContext, readBytes, request, statusFailure } from './http.js';
import { parseWithModel } from './llm.js';
import { createRecipe, findRecipe, type ManagerTarget, managerName, putImage } from './managers.js';
import { overallProgress, withPhase } from './phases.js';
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

/** What extraction keeps for parsing (the item's `extraction` column). */
interface ExtractionRecord {
  via: Extracted['via'];
  title?: string;
  extractor?: string;
  structured?: SchemaRecipe;
}

export interface UploadOutcome {
  recipeManagerUrl: string;
  /** What the push notification says once the slot is given back. */
  notice: PushPayload;
}

function stopped(): never {
  return jobStopped('item');
}

/** The running activity's attempt and cancellation; outside an activity (tests calling a step directly) a neutral one. */
function activityContext(): { attempt: number; signal: AbortSignal; heartbeat: () => void } {
  let c: Context | undefined;
  try {
    c = Context.current();
  } catch {
    c = undefined;
  }
  if (!c) return { attempt: 1, signal: new AbortController().signal, heartbeat: () => undefined };
  const ctx = c;
  return { attempt: ctx.info.attempt, signal: ctx.cancellationSignal, heartbeat: () => ctx.heartbeat() };
}

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** What a phase wrote when it completed. */
interface PhaseResult<T> {
  value: T;
  results?: RecipeResults;
  extraction?: ExtractionRecord;
  /** The last phase: the item is `success` in the same transaction. */
  final?: boolean;
}

/**
 * The recipe pipeline's steps (recipes/workflow.ts runs them). Each phase activity marks its phase
 * `in_progress` when an attempt starts (with the attempt number), does its work within QUEUE_TIMEOUT_MS, and
 * writes its result, the phase `completed` and the item's progress in one transaction with the `queue-update`
 * event. Work is read from and written to the item's row, so a retried attempt starts from what is stored and
 * Temporal's history stays small.
 */
export function createRecipeActivities(deps: ActivityDeps) {
  const { config, orm, jobs } = deps;
  const log = deps.log.child('recipes');
  const r = config.recipes;
  const tools = new Tools(log.child('tools'), { ytdlpPath: config.transcription.ytdlpPath });
  const em = () => orm.em.fork();
  /** The item's scratch folder, one per run: a run that ends removes its own, never a newer run's. */
  const itemDir = (itemId: string) => path.join(config.dataDir, 'tmp', 'recipes', itemId);
  const tmpDir = (itemId: string, runId: string) => path.join(itemDir(itemId), runId);
  /** The post and its picture are users' URLs; the model and the recipe manager are the operator's. */
  const guard = outboundGuard(config);
  let ytdlpMissingUntil = 0;

  /** yt-dlp if it can be had in a moment; otherwise the page is read directly (and the lookup finishes meanwhile). */
  async function ytdlp(ctx: CallContext): Promise<Tool | undefined> {
    if (Date.now() < ytdlpMissingUntil) return undefined;
    const wait = Math.max(500, Math.min(5000, (ctx.deadline - Date.now()) * 0.3));
    const lookup = tools.getYtDlp().catch((err: Error) => {
      ytdlpMissingUntil = Date.now() + YTDLP_RECHECK_MS;
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
  }

  function managerTarget(): ManagerTarget {
    if (!r.managerBaseUrl) throw new PermanentError('No recipe manager is configured: set RECIPE_MANAGER_BASE_URL (and RECIPE_MANAGER_TOKEN)');
    return { kind: r.manager, baseUrl: r.managerBaseUrl, publicUrl: r.managerPublicUrl ?? r.managerBaseUrl, token: r.managerToken, mealieGroup: r.mealieGroup };
  }

  async function loadItem(itemId: string): Promise<{ job: Job; item: RecipeItem }> {
    const e = em();
    const job = await e.findOne(Job, { id: itemId });
    const item = job && (await e.findOne(RecipeItem, { jobId: itemId }));
    if (!job || !item) stopped();
    return { job, item };
  }

  /** Marks the phase in progress for this attempt; refuses when the run no longer owns the item. */
  async function begin(input: StepInput, phase: PhaseName, attempt: number): Promise<RecipeItem> {
    const now = new Date().toISOString();
    const { changed } = await jobs.update(
      em(),
      input.itemId,
      (job) => (owns(job, input.runId) ? { stage: phase, stageDetail: attempt > 1 ? `attempt ${attempt}` : null, progress: overallProgress(phase, false) } : null),
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
    return (await loadItem(input.itemId)).item;
  }

  /** The phase's result, the phase `completed` and the item's progress (or `success`), in one transaction. */
  async function complete(input: StepInput, phase: PhaseName, out: PhaseResult<unknown>): Promise<Job> {
    const now = new Date();
    const { job, changed } = await jobs.update(
      em(),
      input.itemId,
      (job) => {
        if (!owns(job, input.runId)) return null;
        return out.final
          ? { status: RECIPE_STATUSES.done, progress: 100, stage: phase, stageDetail: null, error: null, completedAt: now }
          : { progress: overallProgress(phase, true), stageDetail: null };
      },
      {
        within: async (tx) => {
          const item = await tx.findOneOrFail(RecipeItem, { jobId: input.itemId });
          item.phases = withPhase(item.phases, phase, (p) => ({ ...p, status: 'completed', completedAt: now.toISOString(), progress: 100 }));
          if (out.results) item.results = { ...item.results, ...out.results };
          if (out.extraction) item.extraction = out.extraction as unknown as Record<string, unknown>;
          await tx.flush();
        },
      },
    );
    if (!changed) stopped();
    return job;
  }

  /** One attempt of a phase: begin, work within QUEUE_TIMEOUT_MS (heartbeating, so cancellation arrives), complete. */
  async function step<T>(input: StepInput, phase: PhaseName, work: (item: RecipeItem, ctx: CallContext) => Promise<PhaseResult<T>>): Promise<T> {
    const a = activityContext();
    const item = await begin(input, phase, a.attempt);
    const ctx: CallContext = { signal: a.signal, deadline: Date.now() + input.timeoutMs };
    const beat = setInterval(a.heartbeat, Math.max(200, Math.min(2000, input.timeoutMs / 3)));
    let out: PhaseResult<T>;
    try {
      out = await work(item, ctx);
    } catch (err) {
      if (!a.signal.aborted) {
        log.warn(`${phase} attempt failed`, { itemId: input.itemId, attempt: a.attempt, error: (err as Error).message, permanent: err instanceof PermanentError });
      }
      throw retryLater(err, MAX_RETRY_AFTER_MS);
    } finally {
      clearInterval(beat);
    }
    await complete(input, phase, out);
    return out.value;
  }

  /** The post's picture (a URL the post named) to the recipe created; failures are logged, never thrown. */
  async function attachPicture(target: ManagerTarget, id: string, picture: string, ctx: CallContext, itemId: string): Promise<boolean> {
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

  const notice = (job: Job, item: RecipeItem, status: QueueStatus): PushPayload => {
    const recipe = item.results.recipe as { name?: string } | undefined;
    const common = { tag: `recipe:${job.id}`, data: { kind: 'recipe', itemId: job.id, status, postUrl: item.url, url: item.results.recipeManagerUrl ?? `/api/queue/${job.id}` } };
    if (status === 'success') return { title: 'Recipe imported', body: truncate(recipe?.name ?? item.url, 200), ...common };
    if (status === 'unhealthy') return { title: 'Recipe import interrupted', body: truncate(`${job.error ?? 'A service did not answer'} It can be retried.`, 240), ...common };
    return { title: 'Recipe not imported', body: truncate(job.error ?? 'The post could not be imported', 240), ...common };
  };

  return {
    /** Extraction: the post's text, title and picture (recipes/extract.ts). */
    async recipeExtract(input: StepInput): Promise<{ via: string; chars: number }> {
      return step(input, 'extraction', async (item, ctx) => {
        const dir = tmpDir(input.itemId, input.runId);
        let cookiesFile: string | undefined;
        try {
          if (r.cookiesFile) {
            // yt-dlp writes its cookie jar back on exit: each attempt gets its own copy.
            await fs.mkdir(dir, { recursive: true });
            cookiesFile = path.join(dir, `cookies-${process.pid}-${Date.now()}.txt`);
            await fs.copyFile(r.cookiesFile, cookiesFile).catch((err: Error) => {
              throw new PermanentError(`RECIPE_COOKIES_FILE cannot be read: ${err.message}`);
            });
          }
          const tool = await ytdlp(ctx);
          const x = await extractPost(item.url, { ...ctx, ytdlp: tool, guard, cookiesFile, log });
          return {
            value: { via: x.via, chars: x.text.length },
            results: { extractedText: x.text, ...(x.thumbnail && { thumbnail: x.thumbnail }) },
            extraction: { via: x.via, ...(x.title && { title: x.title }), ...(x.extractor && { extractor: x.extractor }), ...(x.structured && { structured: x.structured }) },
          };
        } finally {
          if (cookiesFile) await fs.rm(cookiesFile, { force: true });
        }
      });
    },

    /** Parsing: the page's own schema.org Recipe when it had one, else the language model (recipes/llm.ts). */
    async recipeParse(input: StepInput): Promise<{ via: 'json-ld' | 'llm'; mode?: string; name: string }> {
      return step<{ via: 'json-ld' | 'llm'; mode?: string; name: string }>(input, 'parsing', async (item, ctx) => {
        const x = item.extraction as unknown as ExtractionRecord | null;
        const text = item.results.extractedText;
        if (!x || !text) throw new PermanentError('Nothing to parse: extraction stored no text');
        if (x.structured) return { value: { via: 'json-ld', name: x.structured.name }, results: { recipe: x.structured as unknown as Record<string, unknown> } };
        if (!r.llmBaseUrl) throw new PermanentError('No language model is configured: set LLM_API_BASE_URL (and LLM_API_KEY, LLM_MODEL)');
        const parsed = await parseWithModel(
          { baseUrl: r.llmBaseUrl, apiKey: r.llmApiKey, model: r.llmModel, style: r.llmApiStyle },
          { url: item.url, title: x.title, text, thumbnail: item.results.thumbnail },
          ctx,
        );
        return {
          value: { via: 'llm', mode: parsed.mode, name: parsed.recipe.name },
          results: { recipe: parsed.recipe as unknown as Record<string, unknown> },
        };
      });
    },

    /**
     * Uploading: the recipe to Mealie or Tandoor, then the post's picture (best effort, in what is left of the
     * attempt's time: a recipe is never failed for its picture). The created slug or id is remembered on the item as
     * soon as the manager answers, and an attempt that finds it there does not create another recipe; the item is
     * `success`, with `recipeManagerUrl`, in the same transaction as the phase's completion. A run that already
     * finished this way answers what it did (Temporal retrying an activity whose completion was lost).
     */
    async recipeUpload(input: StepInput): Promise<UploadOutcome> {
      const before = await loadItem(input.itemId);
      if (before.job.status === RECIPE_STATUSES.done && before.job.runId === input.runId && before.item.results.recipeManagerUrl) {
        return { recipeManagerUrl: before.item.results.recipeManagerUrl, notice: notice(before.job, before.item, 'success') };
      }
      // An earlier attempt of this run began uploading and did not finish: it may have created the recipe.
      const interrupted = before.item.phases.some((p) => p.name === 'uploading' && p.status === 'in_progress');
      const url = await step(input, 'uploading', async (item, ctx) => {
        const recipe = item.results.recipe as unknown as SchemaRecipe | undefined;
        if (!recipe) throw new PermanentError('Nothing to upload: parsing stored no recipe');
        const target = managerTarget();
        let id = item.manager === target.kind ? (item.managerRecipeId ?? undefined) : undefined;
        let link = id ? item.results.recipeManagerUrl : undefined;
        if (!id || !link) {
          const found = interrupted ? await findRecipe(target, recipe, ctx) : undefined;
          const created = found ?? (await createRecipe(target, recipe, ctx));
          ({ id, url: link } = created);
          log.info(found ? 'recipe found, created by an interrupted attempt' : 'recipe created', { itemId: input.itemId, manager: target.kind, id });
          // Remembered at once: if the rest of this attempt fails, the next one links this recipe, not a duplicate.
          await jobs.update(
            em(),
            input.itemId,
            (job) => (owns(job, input.runId) ? { stageDetail: `Created in ${managerName(target.kind)}: ${created.id}` } : null),
            {
              silent: true,
              within: async (tx) => {
                const row = await tx.findOneOrFail(RecipeItem, { jobId: input.itemId });
                row.manager = target.kind;
                row.managerRecipeId = created.id;
                row.results = { ...row.results, recipeManagerUrl: created.url };
                await tx.flush();
              },
            },
          );
        }
        if (item.results.thumbnail) await attachPicture(target, id, item.results.thumbnail, { ...ctx, deadline: ctx.deadline - 250 }, input.itemId);
        return { value: link, results: { recipeManagerUrl: link }, final: true };
      });
      const after = await loadItem(input.itemId);
      return { recipeManagerUrl: url, notice: notice(after.job, after.item, 'success') };
    },

    /**
     * Ends the run `error` (permanent) or `unhealthy` (recoverable, attempts used up) with its message; the phase
     * that was running is marked `error` with it (recipes/kind.ts). Answers the push notification to send, or null
     * when the run no longer owns the item.
     */
    async recipeFail(input: { itemId: string; runId: string; status: 'error' | 'unhealthy'; error: string }): Promise<PushPayload | null> {
      let update: { job: Job; changed: boolean };
      try {
        update = await jobs.update(em(), input.itemId, (job) =>
          owns(job, input.runId) ? { status: input.status, error: input.error, completedAt: new Date() } : null,
        );
      } catch (err) {
        if ((err as { code?: string }).code === 'JOB_NOT_FOUND') return null;
        throw err;
      }
      const { job } = update;
      // A retried attempt whose first try wrote the ending: the same answer.
      if (!update.changed && !(job.runId === input.runId && job.status === input.status)) return null;
      const item = await em().findOne(RecipeItem, { jobId: input.itemId });
      return item ? notice(job, item, input.status) : null;
    },

    /** Whatever the run's attempts left in DATA_DIR/tmp/recipes/<itemId>/<runId> (a cookie jar) goes when it ends. */
    async recipeCleanup(input: { itemId: string; runId?: string }): Promise<void> {
      if (!input.runId) return fs.rm(itemDir(input.itemId), { recursive: true, force: true });
      await removeWorkFolder(tmpDir(input.itemId, input.runId));
    },
  };
}
export type RecipeActivities = ReturnType<typeof createRecipeActivities>;
