import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Job } from '../db/entities/job.js';
import { Library, LibraryVersion } from './entities/library.js';
import type { JobKind } from '../jobs/kinds.js';

/**
 * An indexing job's `detail` (the job row's JSON column, shared by every kind): which library or version it indexes
 * and how far it got. Read through `indexDetail`, which checks it; rows written before a count existed read it as 0.
 */
const indexJobDetail = z.looseObject({
  repositoryId: z.string(),
  versionId: z.string().nullable(),
  totalFiles: z.number().default(0),
  processedFiles: z.number().default(0),
  /** Stage `embedding`: snippets that lacked a vector for the active profile, and how many of them have one now. */
  snippetsToEmbed: z.number().optional(),
  embeddedSnippets: z.number().optional(),
});
export type IndexJobDetail = z.infer<typeof indexJobDetail>;

export const indexDetail = (job: Job): IndexJobDetail => indexJobDetail.parse(job.detail);

/** An indexing job as the API shows it (docs/documentation-index.md). */
export function serializeIndexJob(job: Job) {
  const d = indexDetail(job);
  return {
    id: job.id,
    repositoryId: d.repositoryId,
    versionId: d.versionId,
    status: job.status,
    progress: job.progress,
    totalFiles: d.totalFiles,
    processedFiles: d.processedFiles,
    snippetsToEmbed: d.snippetsToEmbed ?? null,
    embeddedSnippets: d.embeddedSnippets ?? null,
    stage: job.stage ?? 'queued',
    stageDetail: job.stageDetail ?? null,
    error: job.error ?? null,
    startedAt: job.startedAt?.toISOString() ?? null,
    completedAt: job.completedAt?.toISOString() ?? null,
    createdAt: job.createdAt.toISOString(),
  };
}
export type IndexJobView = ReturnType<typeof serializeIndexJob>;

/**
 * Library and version states follow their indexing job, in the same transaction as the job's change:
 * running -> `indexing`, unless the scope was indexed before: a re-index (a refresh's, every day) swaps its snippets
 * in one transaction, so the old ones are served until then and the scope stays `indexed`; done -> `indexed`; failed
 * (or cancelled, or reconciled after a crash) -> back to `indexed` when earlier snippets are still there to serve,
 * else `error`.
 */
async function followJob(tx: EntityManager, job: Job, before: Pick<Job, 'status' | 'completedAt'>): Promise<void> {
  const { repositoryId, versionId } = indexDetail(job);
  // What the scope serves now: its snippets, and whether an earlier run indexed it.
  const target = async () => {
    const t = versionId ? await tx.findOne(LibraryVersion, { id: versionId }) : await tx.findOne(Library, { id: repositoryId });
    const indexedAt = t && ('indexedAt' in t ? t.indexedAt : t.lastIndexedAt);
    return { snippets: t?.totalSnippets ?? 0, indexedBefore: indexedAt != null };
  };
  let state: 'indexing' | 'indexed' | 'error' | undefined;
  if (job.completedAt == null && job.status === 'running' && before.status !== 'running') {
    const t = await target();
    state = t.indexedBefore && t.snippets > 0 ? 'indexed' : 'indexing';
  } else if (job.completedAt != null && before.completedAt == null) {
    if (job.status === 'done') state = 'indexed';
    else {
      state = (await target()).snippets > 0 ? 'indexed' : 'error';
    }
  }
  if (!state) return;
  if (versionId) await tx.nativeUpdate(LibraryVersion, { id: versionId }, { state });
  else await tx.nativeUpdate(Library, { id: repositoryId }, { state, updatedAt: new Date() });
}

export const indexJobKind: JobKind = {
  name: 'index',
  statuses: { queued: 'queued', running: 'running', done: 'done', failed: 'failed', cancelled: 'failed' },
  stateEvent: (job) => ({ event: 'status', data: serializeIndexJob(job) }),
  eventContext: (job) => ({ jobId: job.id, repositoryId: indexDetail(job).repositoryId, versionId: indexDetail(job).versionId }),
  onChange: followJob,
};
