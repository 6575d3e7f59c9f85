import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowNotFoundError } from '@temporalio/client';
import { taskQueue } from '../core/config.js';
import { NotFoundError } from '../core/errors.js';
import { Job } from '../db/entities/job.js';
import { readTogether } from '../jobs/read-together.js';
import { asValidationError, isAddressRefusal, outboundGuard, refused } from '../outbound/guard.js';
import { type PlaylistInput, playlistWorkflowIdFor, TRANSCRIPTION_PLAYLIST_WORKFLOW } from './contract.js';
import { Transcription, TranscriptionGroup } from './entities.js';
import { TRANSCRIPTION_STATUS_LIST, TRANSCRIPTION_STATUSES } from './kind.js';
import { jobView, type ServiceDeps, TranscriptionService } from './service.js';
import type { AudioMode } from './transcripts/audio.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const notFound = (id: string) => new NotFoundError(`Playlist ${id} not found`, 'PLAYLIST_NOT_FOUND');

/** A playlist as the API shows it: what it became, what was skipped and why, and its jobs with their statuses. */
export function groupView(g: TranscriptionGroup, jobs: ReturnType<typeof jobView>[]) {
  const counts = Object.fromEntries(TRANSCRIPTION_STATUS_LIST.map((s) => [s, jobs.filter((j) => j.status === s).length]));
  return {
    id: g.id,
    sourceUrl: g.sourceUrl,
    title: g.title,
    mode: g.mode as AudioMode,
    status: g.status,
    error: g.error ?? null,
    entryCount: g.entryCount ?? null,
    jobCount: g.jobCount,
    skipped: g.skipped,
    counts,
    jobs,
    createdAt: g.createdAt.toISOString(),
    updatedAt: g.updatedAt.toISOString(),
    cancelledAt: g.cancelledAt?.toISOString() ?? null,
  };
}
export type GroupView = ReturnType<typeof groupView>;

/**
 * Playlists (docs/transcription.md, "Playlists"): a playlist or channel URL, expanded by a workflow into one job
 * per entry; read, and cancelled, as a group.
 */
export class PlaylistService {
  private readonly jobsService: TranscriptionService;

  constructor(private readonly d: ServiceDeps) {
    this.jobsService = new TranscriptionService(d);
  }

  /**
   * A new group, expanding; or, for a URL whose group is still expanding or has jobs still running, that group
   * (`created: false`): asking twice does not double the jobs. An address the guard refuses is 400.
   */
  async create(input: { url: string; mode: AudioMode }): Promise<{ group: GroupView; created: boolean }> {
    try {
      await outboundGuard(this.d.config).checkUrl(input.url, 'The playlist URL');
    } catch (err) {
      if (isAddressRefusal(err)) throw asValidationError(refused('The playlist URL', err), '/body/url');
      // Not resolvable now: the expansion says so with yt-dlp's own error.
    }
    const { group, created } = await this.d.em().transactional(async (tx) => {
      await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`transcription-playlist-url:${input.url}`]);
      const earlier = await tx.findOne(TranscriptionGroup, { sourceUrl: input.url, cancelledAt: null, status: { $in: ['expanding', 'expanded'] } }, { orderBy: { createdAt: 'desc' } });
      if (earlier && (earlier.status === 'expanding' || (await this.unfinishedJobs(tx, earlier.id)) > 0)) return { group: earlier, created: false };
      const now = new Date();
      const group = tx.create(TranscriptionGroup, {
        id: randomUUID(),
        sourceUrl: input.url,
        title: input.url.slice(0, 300),
        mode: input.mode,
        status: 'expanding',
        entryCount: null,
        jobCount: 0,
        skipped: [],
        createdAt: now,
        updatedAt: now,
      });
      await tx.flush();
      return { group, created: true };
    });
    if (group.status === 'expanding') await this.startExpansion(group.id);
    return { group: await this.get(group.id), created };
  }

  /** Starts the expansion (or finds it running: a second request, or one whose start was cut off, starts no other). */
  private async startExpansion(groupId: string): Promise<void> {
    const t = this.d.config.transcription;
    const input: PlaylistInput = { groupId, limits: { heartbeatTimeoutMs: t.heartbeatTimeoutMs, mediaTimeoutMs: t.mediaTimeoutMs } };
    try {
      await this.d.temporal.workflow.start(TRANSCRIPTION_PLAYLIST_WORKFLOW, {
        taskQueue: taskQueue(this.d.config, 'transcription'),
        workflowId: this.d.config.taskQueuePrefix + playlistWorkflowIdFor(groupId),
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
    } catch (err) {
      const error = `Could not start the expansion: ${(err as Error).message}`;
      await this.d.em().nativeUpdate(TranscriptionGroup, { id: groupId, status: 'expanding' }, { status: 'failed', error, updatedAt: new Date() });
    }
  }

  private async unfinishedJobs(em: EntityManager, groupId: string): Promise<number> {
    const ids = (await em.find(Transcription, { groupId }, { fields: ['jobId'] })).map((r) => r.jobId);
    return ids.length ? em.count(Job, { id: { $in: ids }, completedAt: null }) : 0;
  }

  async get(id: string): Promise<GroupView> {
    if (!UUID.test(id)) throw notFound(id);
    const read = await readTogether(this.d.em(), async (em) => {
      const group = await em.findOne(TranscriptionGroup, { id });
      const rows = group ? await em.find(Transcription, { groupId: id }, { orderBy: { groupIndex: 'asc' } }) : [];
      const jobs = new Map((await em.find(Job, { id: { $in: rows.map((r) => r.jobId) } })).map((j) => [j.id, j]));
      return group && { group, rows, jobs };
    });
    if (!read) throw notFound(id);
    const { group, rows, jobs } = read;
    return groupView(group, rows.filter((r) => jobs.has(r.jobId)).map((r) => jobView(jobs.get(r.jobId)!, r)));
  }

  /**
   * Cancels the group: no job is created for it from now on (the expansion checks under the same lock), the
   * expansion stops, and every job of it still pending or processing is cancelled as DELETE /api/jobs/:id does.
   */
  async cancel(id: string): Promise<GroupView> {
    await this.get(id);
    await this.d.em().transactional(async (tx) => {
      await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`transcription-group:${id}`]);
      const g = await tx.findOneOrFail(TranscriptionGroup, { id }, { refresh: true });
      if (!g.cancelledAt) tx.assign(g, { cancelledAt: new Date(), status: g.status === 'failed' ? 'failed' : 'cancelled', updatedAt: new Date() });
    });
    await this.d.temporal.workflow
      .getHandle(this.d.config.taskQueuePrefix + playlistWorkflowIdFor(id))
      .cancel()
      .catch((err: Error) => {
        if (!(err instanceof WorkflowNotFoundError)) this.d.log.warn('could not cancel the expansion of a cancelled playlist', { groupId: id, error: err.message });
      });
    for (const job of (await this.get(id)).jobs) {
      if (job.status === TRANSCRIPTION_STATUSES.queued || job.status === TRANSCRIPTION_STATUSES.running) await this.jobsService.cancel(job.id).catch(() => undefined);
    }
    return this.get(id);
  }
}
