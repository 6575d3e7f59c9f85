import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../core/errors.js';
import { redact } from '../core/redact.js';
import { Job } from '../db/entities/job.js';
import { appendEvent } from './events.js';
import { jobStopped, mayTakeOver, owns } from './ownership.js';
import type { JobKind, JobKinds } from './kinds.js';

/** The streams a job's events go to: its own, its kind's, and its topics. */
export function jobStreams(job: Pick<Job, 'id' | 'kind' | 'topics'>): string[] {
  return [`job:${job.id}`, `kind:${job.kind}`, ...job.topics];
}

export interface NewJob {
  kind: string;
  workflowId: string;
  status: string;
  stage?: string;
  id?: string;
  topics?: string[];
  activeKey?: string | null;
  detail?: Record<string, unknown>;
  /**
   * Writes a service's own rows for the new job in the same transaction, after the job row and before its state
   * event (a recipe item with its job); if it throws, nothing is written and the error reaches the caller.
   */
  within?: (tx: EntityManager, job: Job) => Promise<void>;
}

export type JobPatch = Partial<
  Pick<
    Job,
    'status' | 'progress' | 'stage' | 'stageDetail' | 'error' | 'startedAt' | 'completedAt' | 'detail' | 'runId'
  >
>;

/** How a run's job ended (JobStore.finish); the job's kind names the status each one is stored as. */
export type JobOutcome = 'done' | 'failed' | 'cancelled';

export interface ExtraEvent {
  event: string;
  data: Record<string, unknown>;
}

/**
 * All writes to jobs go through here, so every change is one transaction that also appends its events
 * (an advisory lock on the job id serialises overlapping activity attempts; docs/jobs.md, "Jobs and their workflows").
 */
export class JobStore {
  constructor(readonly kinds: JobKinds) {}

  kind(job: Pick<Job, 'kind'>): JobKind {
    return this.kinds.get(job.kind);
  }

  /**
   * Inserts a job unless an unfinished one holds the same `activeKey`; then that one is returned with
   * `created: false`. The state event is written in the same transaction.
   */
  async create(em: EntityManager, input: NewJob): Promise<{ job: Job; created: boolean }> {
    const kind = this.kinds.get(input.kind);
    try {
      return await em.fork().transactional(async (tx) => {
        const now = new Date();
        const job = tx.create(Job, {
          id: input.id ?? randomUUID(),
          kind: input.kind,
          workflowId: input.workflowId,
          status: input.status,
          stage: input.stage ?? null,
          progress: 0,
          topics: input.topics ?? [],
          activeKey: input.activeKey ?? null,
          detail: input.detail ?? {},
          createdAt: now,
          updatedAt: now,
        });
        await tx.flush();
        await input.within?.(tx, job);
        await kind.onChange?.(tx, job, { status: job.status, completedAt: null });
        const { event, data } = await kind.stateEvent(job, tx);
        await appendEvent(tx, jobStreams(job), event, { ...kind.eventContext?.(job), ...data });
        return { job, created: true };
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException && input.activeKey) {
        const existing = await em.fork().findOne(Job, { activeKey: input.activeKey, completedAt: null });
        if (existing) return { job: existing, created: false };
      }
      throw err;
    }
  }

  async get(em: EntityManager, id: string): Promise<Job> {
    const job = await em.fork().findOne(Job, { id });
    if (!job) throw new NotFoundError(`Job ${id} not found`, 'JOB_NOT_FOUND');
    return job;
  }

  /**
   * Changes a job under its lock, in one transaction with the events that report the change. `change` sees the
   * locked row and returns the patch, or null to leave the job as it is (how activities stay idempotent when
   * Temporal retries them). The state event is published unless `silent`; `extra` events follow it. `within`
   * writes a service's own rows that change with the job (a transcript with its job's `done`) in the same
   * transaction, after the job's change; if it throws, nothing is written. `leading` events come before the state
   * event (a last stage's progress, written with the ending it leads to: a stream closes after the ending).
   */
  async update(
    em: EntityManager,
    id: string,
    change: JobPatch | ((job: Job) => JobPatch | null),
    opts: {
      extra?: (job: Job) => ExtraEvent[];
      leading?: (job: Job) => ExtraEvent[];
      silent?: boolean;
      within?: (tx: EntityManager, job: Job) => Promise<void>;
    } = {},
  ): Promise<{ job: Job; changed: boolean }> {
    return em.fork().transactional(async (tx) => {
      const job = await this.lock(tx, id);
      let patch = typeof change === 'function' ? change(job) : change;
      if (!patch) return { job, changed: false };
      if (patch.error) patch = { ...patch, error: redact(patch.error) };
      const before = { status: job.status, completedAt: job.completedAt };
      tx.assign(job, { ...patch, updatedAt: new Date() });
      await tx.flush();
      await opts.within?.(tx, job);
      const kind = this.kind(job);
      await kind.onChange?.(tx, job, before);
      const streams = jobStreams(job);
      const context = kind.eventContext?.(job);
      for (const e of opts.leading?.(job) ?? []) await appendEvent(tx, streams, e.event, { ...context, ...e.data });
      if (!opts.silent) {
        const { event, data } = await kind.stateEvent(job, tx);
        await appendEvent(tx, streams, event, { ...context, ...data });
      }
      for (const e of opts.extra?.(job) ?? []) await appendEvent(tx, streams, e.event, { ...context, ...e.data });
      return { job, changed: true };
    });
  }

  /**
   * Locks the job until the end of `tx`'s transaction (the lock every change of it takes) and reads it as it is
   * now.
   */
  private async lock(tx: EntityManager, id: string): Promise<Job> {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`job:${id}`]);
    const job = await tx.findOne(Job, { id }, { refresh: true });
    if (!job) throw new NotFoundError(`Job ${id} not found`, 'JOB_NOT_FOUND');
    return job;
  }

  /**
   * Whether the run owns the job, checked under the job's lock, held until `tx`'s transaction ends: for a
   * transaction that writes a job's rows without changing the job (the index swap begun while its crawl goes on,
   * docindex/pipeline.ts), so that an older run's commit cannot land after a retry's.
   */
  async ownedWithin(tx: EntityManager, ref: { jobId: string; runId: string }): Promise<boolean> {
    return owns(await this.lock(tx, ref.jobId), ref.runId);
  }

  /**
   * `update`, by the run recorded as the job's owner only (jobs/ownership.ts): a run that no longer owns the job (a
   * retry took it over, or it ended) changes nothing, and `changed` says so.
   */
  updateAsOwner(
    em: EntityManager,
    ref: { jobId: string; runId: string },
    change: JobPatch | ((job: Job) => JobPatch),
    opts: { extra?: (job: Job) => ExtraEvent[]; silent?: boolean; within?: (tx: EntityManager, job: Job) => Promise<void> } = {},
  ): Promise<{ job: Job; changed: boolean }> {
    return this.update(em, ref.jobId, (job) => (owns(job, ref.runId) ? (typeof change === 'function' ? change(job) : change) : null), opts);
  }

  /**
   * A run takes its job as it starts (jobs/ownership.ts): it owns it already (the API recorded it at the start), or it
   * is the workflow's current run (`currentRun`, asked of Temporal only then) and the job names another run or none.
   * The job is marked running once; `also` adds the first step's own stage and events to that write (an index's
   * crawl, which starts its job itself). True when this call wrote; false when the run had started it already. Any
   * other run stops with JOB_STOPPED and writes nothing; a job that is gone throws NotFoundError, as `update` does.
   */
  async start(
    em: EntityManager,
    ref: { jobId: string; runId: string },
    currentRun: (workflowId: string) => Promise<string | undefined>,
    also: { patch?: JobPatch; extra?: (job: Job) => ExtraEvent[] } = {},
  ): Promise<boolean> {
    const seen = await this.get(em, ref.jobId);
    const current = seen.runId === ref.runId ? ref.runId : await currentRun(seen.workflowId);
    let refused = false;
    const { changed } = await this.update(
      em,
      ref.jobId,
      (job) => {
        const running = { ...also.patch, status: this.kind(job).statuses.running, startedAt: new Date() };
        if (owns(job, ref.runId)) return job.startedAt ? null : running;
        if (!mayTakeOver(job, ref.runId, current)) {
          refused = true;
          return null;
        }
        return { ...running, completedAt: null, error: null, runId: ref.runId };
      },
      { extra: also.extra },
    );
    if (refused) jobStopped();
    return changed;
  }

  /**
   * Records how a run's job ended, once: a run that no longer owns the job (or a repeated attempt after the ending
   * was written) changes nothing, and `changed` says whether this call wrote it. The one place a plain ending (no
   * result rows of the service's own with it) is written: the workflow's finishJob (workflows/job-lifecycle.ts), and
   * a last step that ends its job itself (a no-change re-index's, docindex/workflow.ts), which writes its last stage
   * (`also`: the stage, its progress event before the ending's, its library's statistics) in the same transaction.
   */
  finish(
    em: EntityManager,
    input: { jobId: string; runId: string; outcome: JobOutcome; error?: string },
    also: { patch?: JobPatch; leading?: (job: Job) => ExtraEvent[]; within?: (tx: EntityManager) => Promise<void> } = {},
  ): Promise<{ job: Job; changed: boolean }> {
    return this.update(
      em,
      input.jobId,
      (job) => {
        if (!owns(job, input.runId)) return null;
        return {
          ...also.patch,
          status: this.kind(job).statuses[input.outcome],
          progress: input.outcome === 'done' ? 100 : job.progress,
          error: input.outcome === 'done' ? null : (input.error ?? null),
          completedAt: new Date(),
        };
      },
      { leading: also.leading, within: also.within },
    );
  }

  /**
   * Unfinished jobs last changed before `olderThan`, for the reconciler: a job a retry has just queued again is as
   * young as a new one.
   */
  async unfinished(em: EntityManager, olderThan: Date): Promise<Job[]> {
    return em.fork().find(Job, { completedAt: null, updatedAt: { $lt: olderThan } }, { orderBy: { createdAt: 'asc' } });
  }
}
