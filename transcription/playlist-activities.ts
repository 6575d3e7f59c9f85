import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ActivityDeps } from '../activities/deps.js';
import { PermanentError } from '../core/errors.js';
import { Job } from '../db/entities/job.js';
import { startLaunchedJob } from '../jobs/launch.js';
import { refused } from '../outbound/guard.js';
import { isAddressRefusal } from '../outbound/refusal.js';
import { bindStep, transcriptionDeps, type TranscriptionDeps, withRunContext } from './activity-deps.js';
import { TRANSCRIPTION_WORKFLOW } from './contract.js';
import { Transcription, TranscriptionGroup } from './entities.js';
import { listPlaylist } from './media.js';
import { type PlaylistListing, readPlaylist } from './playlist-entries.js';
import { workDir } from './paths.js';
import { createTranscriptionJob, workflowInput } from './service.js';
import type { AudioMode } from './transcripts/audio.js';

/**
 * A playlist's expansion (docs/transcription.md, "Playlists"): yt-dlp lists the entries, then each becomes a job with
 * an id derived from the group and the entry's place, so an attempt cut off halfway is finished by the next one
 * without losing or doubling an entry.
 */

/** The transcription steps' dependencies, and the client that starts the entries' workflows. */
type PlaylistDeps = TranscriptionDeps & { temporal: Client };

/** The entry's job id: a UUID (v5-like) of the group id and the entry's index, the same on every attempt. */
export function entryJobId(groupId: string, index: number): string {
  const h = createHash('sha256').update(`${groupId}/${index}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const cancelledGroup = () => new PermanentError('The playlist was cancelled', 'PLAYLIST_CANCELLED');

/** The group under its lock (the one a cancel takes): nothing is created for a playlist once it is cancelled. */
async function lockGroup(tx: EntityManager, groupId: string): Promise<TranscriptionGroup> {
  await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`transcription-group:${groupId}`]);
  return tx.findOneOrFail(TranscriptionGroup, { id: groupId }, { refresh: true });
}

/** Lists the playlist with yt-dlp (through the outbound guard, as a single URL's job): the entries and those skipped. */
export async function listEntries(d: TranscriptionDeps, input: { groupId: string }): Promise<PlaylistListing | { cancelled: true }> {
  const group = await d.orm.em.fork().findOneOrFail(TranscriptionGroup, { id: input.groupId });
  if (group.cancelledAt) return { cancelled: true };
  try {
    await d.guard.checkUrl(group.sourceUrl, 'The playlist URL');
  } catch (err) {
    if (isAddressRefusal(err)) throw new PermanentError(`ADDRESS_NOT_ALLOWED: ${err.message}`, err.code);
    throw err;
  }
  const t = d.config.transcription;
  const ytdlp = await d.tools.getYtDlp();
  const dir = path.join(workDir(d.config.dataDir, input.groupId), `list-${Context.current().info.attempt}`);
  const proxy = await d.guard.proxyUrl();
  try {
    const json = await withRunContext(t.mediaTimeoutMs, (ctx) => listPlaylist(ytdlp, group.sourceUrl, dir, { ...ctx, proxy, end: t.playlistMaxEntries * 2 + 10 }));
    return readPlaylist(json, { maxEntries: t.playlistMaxEntries, maxDurationSeconds: t.maxDurationSeconds });
  } catch (err) {
    if (isAddressRefusal(err)) throw new PermanentError(`ADDRESS_NOT_ALLOWED: ${refused('The playlist URL', err).message}`, err.code);
    throw err;
  } finally {
    await fs.rm(workDir(d.config.dataDir, input.groupId), { recursive: true, force: true });
  }
}

/**
 * One job per listed entry, each created (and its workflow started) unless an earlier attempt did; then the group
 * records what it became. A cancelled group stops here: its check and each job's insert share the group's lock.
 */
export async function createEntryJobs(d: PlaylistDeps, input: { groupId: string; listing: PlaylistListing }): Promise<{ jobs: number; cancelled: boolean }> {
  const em = () => d.orm.em.fork();
  const group = await em().findOneOrFail(TranscriptionGroup, { id: input.groupId });
  const deps = { config: d.config, em, jobs: d.jobs, temporal: d.temporal };
  for (const entry of input.listing.entries) {
    const id = entryJobId(group.id, entry.index);
    Context.current().heartbeat(entry.index);
    const existing = await em().findOne(Job, { id });
    if (existing) {
      // Created by an attempt that stopped before its workflow started: start it now.
      if (!existing.runId && !existing.completedAt) {
        const row = await em().findOneOrFail(Transcription, { jobId: id });
        await startLaunchedJob(deps, existing, { workflowType: TRANSCRIPTION_WORKFLOW, queue: 'transcription', args: (j) => [workflowInput(d.config, j, row)], subject: entry.url });
      }
      continue;
    }
    try {
      await createTranscriptionJob(
        deps,
        { id, sourceKind: 'url', sourceUrl: entry.url, mode: group.mode as AudioMode, ...(entry.title && { title: entry.title }), group: { id: group.id, index: entry.index } },
        async (tx) => {
          if ((await lockGroup(tx, group.id)).cancelledAt) throw cancelledGroup();
        },
      );
    } catch (err) {
      if (err instanceof PermanentError && err.code === 'PLAYLIST_CANCELLED') return { jobs: 0, cancelled: true };
      // Another attempt (a timed-out one still running) created it at the same moment.
      if (!(err instanceof UniqueConstraintViolationException)) throw err;
    }
  }
  const { listing } = input;
  const cancelled = await em().transactional(async (tx) => {
    const g = await lockGroup(tx, group.id);
    if (g.cancelledAt) return true;
    tx.assign(g, {
      status: 'expanded',
      title: (listing.title ?? g.title).slice(0, 300),
      entryCount: listing.entryCount,
      jobCount: listing.entries.length,
      skipped: listing.skipped,
      updatedAt: new Date(),
    });
    return false;
  });
  return { jobs: listing.entries.length, cancelled };
}

/** The expansion failed (no playlist, empty, refused, yt-dlp's error): the group says why; a cancelled one stays so. */
export async function failGroup(d: TranscriptionDeps, input: { groupId: string; error: string }): Promise<void> {
  await d.orm.em.fork().transactional(async (tx) => {
    const g = await lockGroup(tx, input.groupId);
    if (g.cancelledAt || g.status !== 'expanding') return;
    tx.assign(g, { status: 'failed', error: input.error.slice(0, 2000), updatedAt: new Date() });
  });
}

/** The activities of a playlist's expansion, under the names its workflow calls. */
export function createPlaylistActivities(deps: ActivityDeps) {
  const d: PlaylistDeps = { ...transcriptionDeps(deps), temporal: deps.temporal };
  return {
    transcriptionListPlaylist: bindStep(d, listEntries),
    transcriptionCreatePlaylistJobs: (input: { groupId: string; listing: PlaylistListing }) => createEntryJobs(d, input),
    transcriptionFailPlaylist: bindStep(d, failGroup),
  };
}
export type PlaylistActivities = ReturnType<typeof createPlaylistActivities>;
