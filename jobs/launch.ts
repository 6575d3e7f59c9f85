import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Config, type QueueName, taskQueue } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { Job } from '../db/entities/job.js';
import { jobSearchAttributes, SEARCH_ATTRIBUTES } from './contract.js';
import { releaseSlotOf, type SlotPool } from './slots.js';
import type { JobStore, NewJob } from './store.js';

/** Registers the search attributes in the namespace; already registered is fine (every start calls this). */
export async function registerSearchAttributes(client: Client, log: Logger): Promise<void> {
  const INDEXED_VALUE_TYPE_KEYWORD = 2;
  const existing = await client.connection.operatorService
    .listSearchAttributes({ namespace: client.options.namespace })
    .then((r: { customAttributes?: Record<string, unknown> | null }) => new Set(Object.keys(r.customAttributes ?? {})))
    .catch(() => new Set<string>());
  const missing = Object.values(SEARCH_ATTRIBUTES).filter((k) => !existing.has(k.name));
  if (!missing.length) return;
  try {
    await client.connection.operatorService.addSearchAttributes({
      namespace: client.options.namespace,
      searchAttributes: Object.fromEntries(missing.map((k) => [k.name, INDEXED_VALUE_TYPE_KEYWORD])),
    });
    log.info('registered Temporal search attributes', { names: missing.map((k) => k.name).join(',') });
  } catch (err) {
    // A concurrent start may have added them; anything else only costs searchability, not correctness.
    log.warn('could not register Temporal search attributes', { error: (err as Error).message });
  }
}

export interface LaunchSpec extends NewJob {
  workflowType: string;
  queue: QueueName;
  /** Arguments of the workflow; the job id comes first by convention. */
  args: (job: Job) => unknown[];
  /** What the job is about, for searching in the Temporal UI (a repository id, a URL, a title). */
  subject: string;
}

/** Where and how a job's workflow starts: its task queue, id, arguments, search attributes and memo. */
function startOptions(config: Config, job: Job, spec: Pick<LaunchSpec, 'queue' | 'args' | 'subject'>) {
  return {
    taskQueue: taskQueue(config, spec.queue),
    workflowId: job.workflowId,
    args: spec.args(job),
    ...jobSearchAttributes(job, spec.subject),
  };
}

/** Records the run that was just started as the job's owner, unless the job moved on meanwhile. */
async function recordRun(deps: { em: EntityManager; jobs: JobStore }, jobId: string, runId: string): Promise<Job> {
  const { job } = await deps.jobs.update(deps.em, jobId, (j) => (j.runId == null && j.completedAt == null ? { runId } : null), { silent: true });
  return job;
}

/** Marks a job whose workflow could not start failed, so it never looks stuck. */
async function failToStart(deps: { em: EntityManager; jobs: JobStore }, jobId: string, reason: string): Promise<Job> {
  const { job } = await deps.jobs.update(deps.em, jobId, (j) =>
    j.completedAt ? null : { status: deps.jobs.kind(j).statuses.failed, error: reason, completedAt: new Date() },
  );
  return job;
}

/**
 * Creates the job row (with the service's own rows, `within`, in the same transaction), then starts its workflow
 * with the search attributes and a memo, and records the new run as the job's owner (jobs/ownership.ts). An
 * unfinished job with the same active key is returned instead (`created: false`). If the workflow cannot start, the
 * job is marked failed so it never looks stuck.
 */
export async function launchJob(
  deps: { em: EntityManager; jobs: JobStore; temporal: Client; config: Config },
  spec: LaunchSpec,
): Promise<{ job: Job; created: boolean }> {
  // Deployments sharing a namespace (and test files) keep their workflow ids apart with the task-queue prefix.
  const workflowId = deps.config.taskQueuePrefix + spec.workflowId;
  const { job, created } = await deps.jobs.create(deps.em, { ...spec, workflowId });
  if (!created) return { job, created };
  const start = () =>
    deps.temporal.workflow.start(spec.workflowType, { ...startOptions(deps.config, job, spec), workflowIdConflictPolicy: 'FAIL' });
  let runId: string;
  try {
    try {
      runId = (await start()).firstExecutionRunId;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      // The row's unique active key says the previous job of this key has finished, so its run is only closing
      // (a job is marked done just before its workflow returns): give it a moment, then start ours.
      await Promise.race([
        deps.temporal.workflow.getHandle(workflowId).result().catch(() => undefined),
        new Promise((r) => setTimeout(r, 10_000).unref()), // never holds a shutting-down process open
      ]);
      runId = (await start()).firstExecutionRunId;
    }
  } catch (err) {
    const reason =
      err instanceof WorkflowExecutionAlreadyStartedError
        ? `Another run of workflow ${workflowId} is still active`
        : `Could not start the workflow: ${(err as Error).message}`;
    return { job: await failToStart(deps, job.id, reason), created };
  }
  return { job: await recordRun(deps, job.id, runId), created };
}

export interface RelaunchSpec extends Pick<LaunchSpec, 'workflowType' | 'queue' | 'args' | 'subject'> {
  /** Whether the job as it is now (read under its lock) may run again; only a finished job ever does. */
  retryable: (job: Job) => boolean;
  /** The job's stage while it waits again. */
  stage?: string | null;
  /** Resets the service's own rows in the same transaction (it sees the job already queued again). */
  within?: (tx: EntityManager, job: Job) => Promise<void>;
  memo?: Record<string, unknown>;
  /** The concurrency pool the previous run took a slot of, given back on its behalf. */
  pool?: SlotPool;
}

/**
 * The one way a finished job runs again (a retry), under the same id and workflow id. In one transaction the job goes
 * back to its queued state owned by no run, so nothing the previous run still does can write to it, together with the
 * service's own rows (`within`). Then the previous run's slot is given back, a new run starts (terminating whatever
 * is left of the previous one) and is recorded as the owner. `changed: false` when `retryable` refuses (nothing
 * happened); if the workflow cannot start, the job is marked failed so it never looks stuck.
 */
export async function relaunchJob(
  deps: { em: EntityManager; jobs: JobStore; temporal: Client; config: Config },
  id: string,
  spec: RelaunchSpec,
): Promise<{ job: Job; changed: boolean }> {
  let previousRun: string | null = null;
  const { job, changed } = await deps.jobs.update(
    deps.em,
    id,
    (j) => {
      if (j.completedAt == null || !spec.retryable(j)) return null;
      previousRun = j.runId ?? null;
      return { status: deps.jobs.kind(j).statuses.queued, progress: 0, stage: spec.stage ?? null, stageDetail: null, error: null, startedAt: null, completedAt: null, runId: null };
    },
    { ...(spec.within && { within: spec.within }) },
  );
  if (!changed) return { job, changed };
  if (spec.pool && previousRun) {
    // Best effort: the pool also reclaims slots of runs that ended (workflows/slots.ts).
    await releaseSlotOf(deps.temporal, deps.config, spec.pool, job.workflowId, previousRun).catch(() => undefined);
  }
  const options = startOptions(deps.config, job, spec);
  let runId: string;
  try {
    const handle = await deps.temporal.workflow.start(spec.workflowType, {
      ...options,
      memo: { ...options.memo, ...spec.memo },
      workflowIdConflictPolicy: 'TERMINATE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    });
    runId = handle.firstExecutionRunId;
  } catch (err) {
    return { job: await failToStart(deps, id, `Could not start the workflow: ${(err as Error).message}`), changed };
  }
  return { job: await recordRun(deps, id, runId), changed };
}

/**
 * Starts the workflow of a job created earlier whose start was cut off (its creator stopped between the two), and
 * records its run. A run already started under its workflow id is taken as it is; a job that has an owner or has
 * finished is left alone.
 */
export async function startLaunchedJob(
  deps: { em: () => EntityManager; jobs: JobStore; temporal: Client; config: Config },
  job: Job,
  spec: Pick<LaunchSpec, 'workflowType' | 'queue' | 'args' | 'subject'>,
): Promise<Job> {
  if (job.runId || job.completedAt) return job;
  const handle = await deps.temporal.workflow.start(spec.workflowType, { ...startOptions(deps.config, job, spec), workflowIdConflictPolicy: 'USE_EXISTING' });
  return recordRun({ em: deps.em(), jobs: deps.jobs }, job.id, handle.firstExecutionRunId);
}
