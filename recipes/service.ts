import { watchJob } from '../jobs/watch.js';
import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Config } from '../core/config.js';
import { ConflictError, NotFoundError, ValidationError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { Job } from '../db/entities/job.js';
import { RecipeItem } from './entities.js';
import type { EventHub } from '../jobs/hub.js';
import { launchJob, relaunchJob } from '../jobs/launch.js';
import { readTogether } from '../jobs/read-together.js';
import type { JobStore } from '../jobs/store.js';
import {
  FINISHED_STATUSES,
  type QueueStatus,
  type RecipeOptions,
  RECIPE_KIND,
  RECIPE_STATUSES,
  RECIPE_WORKFLOW,
  type RecipeInput,
  RETRYABLE_STATUSES,
  workflowIdFor,
} from './contract.js';
import { type ItemView, itemView, queueUpdate } from './kind.js';
import { canonicalLanguage } from '../core/languages.js';
import { initialPhases } from './phases.js';
import { normalizePostUrl } from './url.js';

export interface QueueDeps {
  config: Config;
  log: Logger;
  em: () => EntityManager;
  jobs: JobStore;
  temporal: Client;
  hub: EventHub;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const notFound = (id: string) => new NotFoundError(`Queue item ${id} not found`, 'ITEM_NOT_FOUND');

/** An item's language and units as asked (checked; the language canonical), or null when it asked for neither. */
function itemOptions(asked: RecipeOptions): RecipeOptions | null {
  let language: string | undefined;
  if (asked.language !== undefined) {
    language = canonicalLanguage(asked.language);
    if (!language) {
      const message = `language must be a BCP 47 tag of a known language, e.g. en, de, pt-BR (got "${asked.language}")`;
      throw new ValidationError(message, 'INVALID_LANGUAGE', [{ pointer: '/body/language', message }]);
    }
  }
  const options = { ...(language && { language }), ...(asked.units && { units: asked.units }) };
  return Object.keys(options).length ? options : null;
}

/** The recipe queue behind the HTTP API: enqueue (with dedupe), list, read, retry, and waiting for an item to end. */
export class RecipeQueue {
  constructor(private readonly d: QueueDeps) {}

  private input(itemId: string): RecipeInput {
    const r = this.d.config.recipes;
    return { itemId, limits: { timeoutMs: r.timeoutMs, retryAttempts: r.retryAttempts, retryBackoffMs: r.retryBackoffMs } };
  }

  private async byUrlKey(key: string): Promise<ItemView | undefined> {
    const { item, job } = await readTogether(this.d.em(), async (em) => {
      const item = await em.findOne(RecipeItem, { urlKey: key });
      return { item, job: item && (await em.findOne(Job, { id: item.jobId })) };
    });
    return job && item ? itemView(job, item) : undefined;
  }

  /**
   * Queues a post, or answers the item the queue already has for it (`created: false`), whatever its status: one
   * item per post (recipes/url.ts says when two links are one post). A failed one is run again with retry. The item
   * and its job are written in one transaction, so two requests for one post at once make one item.
   */
  async enqueue(rawUrl: string, pointer?: string, asked: RecipeOptions = {}): Promise<{ item: ItemView; created: boolean }> {
    const { url, key } = normalizePostUrl(rawUrl, pointer);
    const options = itemOptions(asked);
    const existing = await this.byUrlKey(key);
    if (existing) return { item: existing, created: false };
    const id = randomUUID();
    let row: RecipeItem | undefined;
    try {
      const { job } = await launchJob(
        { em: this.d.em(), jobs: this.d.jobs, temporal: this.d.temporal, config: this.d.config },
        {
          id,
          kind: RECIPE_KIND,
          status: RECIPE_STATUSES.queued,
          workflowId: workflowIdFor(id),
          workflowType: RECIPE_WORKFLOW,
          queue: 'recipes',
          args: () => [this.input(id)],
          subject: url,
          within: async (tx) => {
            row = tx.create(RecipeItem, { jobId: id, url, urlKey: key, phases: initialPhases(), results: {}, options, runs: 1 });
            await tx.flush();
          },
        },
      );
      return { item: itemView(job, row!), created: true };
    } catch (err) {
      if (!(err instanceof UniqueConstraintViolationException)) throw err;
      // Another request queued the same post a moment ago.
      const raced = await this.byUrlKey(key);
      if (!raced) throw err;
      return { item: raced, created: false };
    }
  }

  private async load(id: string): Promise<{ job: Job; item: RecipeItem }> {
    if (!UUID.test(id)) throw notFound(id);
    const { job, item } = await readTogether(this.d.em(), async (em) => {
      const job = await em.findOne(Job, { id, kind: RECIPE_KIND });
      return { job, item: job && (await em.findOne(RecipeItem, { jobId: id })) };
    });
    if (!job || !item) throw notFound(id);
    return { job, item };
  }

  /** The item's status update as it is now (what a `queue-update` event would carry). */
  async currentUpdate(id: string): Promise<ReturnType<typeof queueUpdate>> {
    const { job, item } = await this.load(id);
    return queueUpdate(job, item);
  }

  async get(id: string): Promise<ItemView> {
    const { job, item } = await this.load(id);
    return itemView(job, item);
  }

  /** Newest first. */
  async list(q: { status?: QueueStatus; limit: number; offset: number }) {
    const where = { kind: RECIPE_KIND, ...(q.status && { status: q.status }) };
    const { jobs, total, rows } = await readTogether(this.d.em(), async (em) => {
      const [jobs, total] = await em.findAndCount(Job, where, { orderBy: { createdAt: 'desc', id: 'asc' }, limit: q.limit, offset: q.offset });
      const rows = new Map((await em.find(RecipeItem, { jobId: { $in: jobs.map((j) => j.id) } })).map((r) => [r.jobId, r]));
      return { jobs, total, rows };
    });
    const items = jobs.filter((j) => rows.has(j.id)).map((j) => itemView(j, rows.get(j.id)!));
    return { items, total, hasMore: q.offset + jobs.length < total, limit: q.limit, offset: q.offset };
  }

  /**
   * Runs an `error` or `unhealthy` item again under the same id: pending, phases and results cleared, `runs` + 1,
   * then a new workflow run (jobs/launch.ts, relaunchJob). 409 ITEM_NOT_RETRYABLE for other statuses.
   */
  async retry(id: string): Promise<ItemView> {
    const { job, item } = await this.load(id);
    const refuse = (status: string) =>
      new ConflictError(`Item ${id} is ${status}; only items in error or unhealthy can be retried`, 'ITEM_NOT_RETRYABLE');
    if (!RETRYABLE_STATUSES.includes(job.status as QueueStatus)) throw refuse(job.status);
    let row: RecipeItem | undefined;
    const { job: started, changed } = await relaunchJob({ em: this.d.em(), jobs: this.d.jobs, temporal: this.d.temporal, config: this.d.config }, id, {
      retryable: (j) => RETRYABLE_STATUSES.includes(j.status as QueueStatus),
      within: async (tx) => {
        row = await tx.findOneOrFail(RecipeItem, { jobId: id });
        tx.assign(row, { phases: initialPhases(), results: {}, extraction: null, manager: null, managerRecipeId: null, runs: row.runs + 1 });
        await tx.flush();
      },
      workflowType: RECIPE_WORKFLOW,
      queue: 'recipes',
      args: () => [this.input(id)],
      subject: item.url,
      // The previous run gave its slot back as its last step in it; if it is still closing, it is given back here.
      pool: 'recipes',
      memo: { run: item.runs + 1 },
    });
    if (!changed) throw refuse(started.status);
    return itemView(started, row!);
  }

  /**
   * Waits until the item's run has ended (success, error, unhealthy), up to `timeoutMs` or until `signal` aborts;
   * answers the item as it is then. Woken by the item's events, with a slow poll as a fallback.
   */
  async waitForEnd(id: string, timeoutMs: number, signal?: AbortSignal): Promise<ItemView> {
    return watchJob(
      this.d.hub,
      id,
      async () => {
        const view = await this.get(id);
        return { done: FINISHED_STATUSES.includes(view.status), value: view };
      },
      { timeoutMs, pollMs: 1000, ...(signal && { signal }) },
    );
  }
}
