import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../core/log.js';
import type { Job } from '../db/entities/job.js';
import type { JobStore } from './store.js';

/**
 * Keeps Postgres honest when a workflow ends without running its own bookkeeping: an operator terminated it in
 * the Temporal UI, it hit a timeout, or it was lost (a dev server wiped, a job row whose workflow never started).
 * Cancellations and failures are recorded by the workflow itself (workflows/job-lifecycle.ts); this is the net.
 * Runs at API startup (startup recovery) and then every RECONCILE_INTERVAL_MS. Idempotent.
 */
export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly deps: {
      em: () => EntityManager;
      jobs: JobStore;
      client: Client;
      log: Logger;
      /** Jobs changed more recently than this are left alone: their workflow may be starting right now. */
      graceMs?: number;
    },
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.runOnce().catch(() => undefined), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Returns how many jobs it marked failed or cancelled. Concurrent calls share one pass. */
  runOnce(): Promise<number> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<number> {
    const { jobs, log } = this.deps;
    const cutoff = new Date(Date.now() - (this.deps.graceMs ?? 10_000));
    let fixed = 0;
    for (const job of await jobs.unfinished(this.deps.em(), cutoff)) {
      try {
        const verdict = await this.verdict(job);
        if (!verdict) continue;
        const { changed } = await jobs.update(this.deps.em(), job.id, (current) => {
          // Only if nothing moved since we looked: a live activity, or a retry, may have changed it meanwhile.
          if (current.completedAt || current.runId !== job.runId || current.updatedAt.getTime() !== job.updatedAt.getTime()) return null;
          const statuses = jobs.kind(current).statuses;
          return {
            status: verdict.outcome === 'cancelled' ? statuses.cancelled : statuses.failed,
            error: verdict.reason,
            completedAt: new Date(),
          };
        });
        if (changed) {
          fixed++;
          log.warn('job reconciled with its workflow', { jobId: job.id, workflowId: job.workflowId, reason: verdict.reason });
        }
      } catch (err) {
        log.warn('reconcile failed for a job; will retry', { jobId: job.id, error: (err as Error).message });
      }
    }
    return fixed;
  }

  private async describe(workflowId: string, runId?: string): Promise<RunState | undefined> {
    try {
      const d = await this.deps.client.workflow.getHandle(workflowId, runId).describe();
      return { runId: d.runId, status: d.status.name, closedAt: d.closeTime };
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
  }

  /**
   * What Temporal says about an unfinished job; undefined while it lives. The job's own run decides (its owner,
   * jobs/ownership.ts), not whatever run is latest: a retry's previous run that already ended says nothing about
   * the new one. Two cases wait instead: a job queued again by a retry whose new run is being started (no run
   * recorded yet, the latest run ended before the job changed), and a job whose run ended while a newer run (an
   * operator's reset) is running and will take it over at its start.
   */
  private async verdict(job: Job): Promise<{ outcome: 'failed' | 'cancelled'; reason: string } | undefined> {
    const latest = await this.describe(job.workflowId);
    if (!latest) {
      // A job no run owns yet may still be starting: its API process keeps trying while Temporal is unreachable
      // (jobs/launch.ts), and the start can get through after Temporal is back, seconds after this pass looks.
      if (!job.runId && Date.now() - job.updatedAt.getTime() < RELAUNCH_GRACE_MS) return undefined;
      return { outcome: 'failed', reason: 'Its workflow no longer exists in Temporal (lost while the service was down)' };
    }
    if (ALIVE.has(latest.status) && latest.runId !== job.runId) return undefined; // a new run takes the job at its start
    if (!job.runId) {
      if (ALIVE.has(latest.status)) return undefined;
      if (latest.closedAt && latest.closedAt < job.updatedAt) {
        if (Date.now() - job.updatedAt.getTime() < RELAUNCH_GRACE_MS) return undefined;
        return { outcome: 'failed', reason: 'Its new run never started (the service stopped while running it again)' };
      }
      return ending(latest.status, () => this.terminateReason(job.workflowId, latest.runId));
    }
    const run = latest.runId === job.runId ? latest : await this.describe(job.workflowId, job.runId);
    if (!run) return { outcome: 'failed', reason: 'Its workflow run no longer exists in Temporal' };
    if (ALIVE.has(run.status)) return undefined;
    return ending(run.status, () => this.terminateReason(job.workflowId, run.runId));
  }

  private async terminateReason(workflowId: string, runId: string): Promise<string> {
    try {
      const res = await this.deps.client.workflowService.getWorkflowExecutionHistoryReverse({
        namespace: this.deps.client.options.namespace,
        execution: { workflowId, runId },
        maximumPageSize: 1,
      });
      const reason = res.history?.events?.[0]?.workflowExecutionTerminatedEventAttributes?.reason;
      return reason ? `: ${reason}` : '';
    } catch {
      return '';
    }
  }
}

interface RunState {
  runId: string;
  status: string;
  closedAt: Date | undefined;
}

const ALIVE = new Set(['RUNNING', 'CONTINUED_AS_NEW', 'PAUSED']);

/**
 * How long a job with no run recorded (new, or queued again by a retry) may wait for its run before the reconciler
 * calls it lost. The API records the run right after starting it, so only a crash in between, or a start retried
 * through a Temporal outage, takes this long.
 */
const RELAUNCH_GRACE_MS = 60_000;

/** The job's ending for a run that closed without recording it. */
async function ending(status: string, terminateReason: () => Promise<string>): Promise<{ outcome: 'failed' | 'cancelled'; reason: string } | undefined> {
  switch (status) {
    case 'TERMINATED':
      return { outcome: 'failed', reason: `Terminated in Temporal${await terminateReason()}` };
    case 'TIMED_OUT':
      return { outcome: 'failed', reason: 'Timed out in Temporal (workflow execution timeout)' };
    case 'CANCELLED':
      return { outcome: 'cancelled', reason: 'Cancelled' };
    case 'FAILED':
      return { outcome: 'failed', reason: 'Its workflow failed without recording the error' };
    case 'COMPLETED':
      return { outcome: 'failed', reason: 'Its workflow completed without recording a result' };
    default:
      return undefined;
  }
}
