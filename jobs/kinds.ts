import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { Job } from '../db/entities/job.js';

export interface StateEvent {
  event: string;
  data: Record<string, unknown>;
}

/**
 * What the shared job machinery needs to know about one service's jobs: its status words and the event payloads it
 * publishes. Each service declares its kind next to its workflow; the reconciler and the store use only this.
 */
export interface JobKind {
  name: string;
  statuses: {
    queued: string;
    running: string;
    done: string;
    failed: string;
    /** Where a service has no separate word for it, this is the failed status. */
    cancelled: string;
  };
  /**
   * The event published on every state change (status, progress, stage, error). It runs in the change's
   * transaction (`tx`), after `within` and `onChange`, so a service may build it from its own rows too.
   */
  stateEvent(job: Job, tx: EntityManager): StateEvent | Promise<StateEvent>;
  /** Fields added to every event of the job, e.g. the library an indexing job belongs to. */
  eventContext?(job: Job): Record<string, unknown>;
  /**
   * Runs inside the transaction of every change, after it is applied: what other records follow the job's
   * state (a library's state follows its indexing job) changes atomically with it, whoever made the change.
   */
  onChange?(tx: EntityManager, job: Job, before: Pick<Job, 'status' | 'completedAt'>): Promise<void>;
  /** Tidies what the service leaves behind (files of jobs that never came to be, say); hourly, on the housekeeping schedule. */
  housekeeping?(h: { em: EntityManager; config: Config; log: Logger }): Promise<void>;
}

/** The default payload: the job's public state. */
export function jobState(job: Job): Record<string, unknown> {
  return {
    jobId: job.id,
    kind: job.kind,
    status: job.status,
    progress: job.progress,
    stage: job.stage ?? null,
    stageDetail: job.stageDetail ?? null,
    error: job.error ?? null,
    updatedAt: job.updatedAt.toISOString(),
  };
}

export class JobKinds {
  private readonly kinds = new Map<string, JobKind>();

  constructor(kinds: readonly JobKind[] = []) {
    for (const k of kinds) this.kinds.set(k.name, k);
  }

  get(name: string): JobKind {
    const kind = this.kinds.get(name);
    if (!kind) throw new Error(`unknown job kind "${name}"`);
    return kind;
  }

  has(name: string): boolean {
    return this.kinds.has(name);
  }

  names(): string[] {
    return [...this.kinds.keys()];
  }

  all(): JobKind[] {
    return [...this.kinds.values()];
  }
}
