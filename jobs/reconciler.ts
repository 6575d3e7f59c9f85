import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../core/log.js';
import type { Job } from '../db/entities/job.js';
import type { JobStore } from './store.js';

/**
 * Keeps Postgres honest when a workflow ends without running its own bookkeeping: an operator terminated it in
 * the Temporal UI, it hit a timeout, or it was lost (a dev server wiped, a job row whose workflow never started).
 * Cancellations and failures are recorded by the workflow itself (workflows/job-lifecycle.ts); this is the net.
 * Runs at API startup (the spec's "startup recovery") and then every RECONCILE_INTERVAL_MS. Idempotent.
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
      /** Jobs younger than this are left alone: their workflow may be starting right now. */
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
          // Only if nothing moved since we looked: a live activity may have finished it meanwhile.
          if (current.completedAt || current.runId !== job.runId) return null;
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

  /** What the workflow's state says about an unfinished job; undefined when the workflow is alive. */
  private async verdict(job: Job): Promise<{ outcome: 'failed' | 'cancelled'; reason: string } | undefined> {
    const handle = this.deps.client.workflow.getHandle(job.workflowId);
    let status: string;
    try {
      const d = await handle.describe();
      status = d.status.name;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        return { outcome: 'failed', reason: 'Its workflow no longer exists in Temporal (lost while the service was down)' };
      }
      throw err;
    }
    // The latest run decides: after an operator's reset the new run is RUNNING and the job lives on.
    switch (status) {
      case 'RUNNING':
      case 'CONTINUED_AS_NEW':
      case 'PAUSED':
        return undefined;
      case 'TERMINATED':
        return { outcome: 'failed', reason: `Terminated in Temporal${await this.terminateReason(job.workflowId)}` };
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

  private async terminateReason(workflowId: string): Promise<string> {
    try {
      const res = await this.deps.client.workflowService.getWorkflowExecutionHistoryReverse({
        namespace: this.deps.client.options.namespace,
        execution: { workflowId },
        maximumPageSize: 1,
      });
      const reason = res.history?.events?.[0]?.workflowExecutionTerminatedEventAttributes?.reason;
      return reason ? `: ${reason}` : '';
    } catch {
      return '';
    }
  }
}
