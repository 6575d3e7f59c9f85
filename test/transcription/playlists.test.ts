import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { Job } from '../../db/entities/job.js';
import { VideoSite, wav } from '../../fakes/media.js';
import { createPlaylistActivities, entryJobId } from '../../transcription/playlist-activities.js';
import { Transcription, TranscriptionGroup } from '../../transcription/entities.js';
import { json, type Json } from '../support/http.js';
import { getJob, isFinished, startTranscriptionHarness, type TranscriptionHarness, waitForJob } from '../support/transcription.js';
import { until } from '../support/until.js';

/**
 * Playlists end to end with the real yt-dlp listing a podcast feed of the local "video site" (fakes/media.ts): one job
 * per entry, entries skipped with a reason, idempotent creation, the group's cancel, bad input.
 */
let h: TranscriptionHarness;
let site: VideoSite;
beforeAll(async () => {
  [h, site] = await Promise.all([startTranscriptionHarness({ env: { TRANSCRIPTION_MAX_DURATION_SECONDS: '600', TRANSCRIPTION_PLAYLIST_MAX_ENTRIES: '3' } }), VideoSite.start()]);
}, 300_000);
afterAll(async () => {
  await Promise.allSettled([h?.stop(), site?.close()]);
});

const captions = (text: string) => `WEBVTT\n\n00:00:00.000 --> 00:00:02.000\n${text}\n`;

async function createPlaylist(url: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${h.url}/api/playlists`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ url, mode: 'none' }) });
  return { status: res.status, body: await json(res) };
}
const getPlaylist = async (id: string) => json(await fetch(`${h.url}/api/playlists/${id}`));
const waitForPlaylist = (id: string, pred: (g: Json) => boolean) => until(() => getPlaylist(id), pred, { timeoutMs: 60_000, what: `playlist ${id}` });

describe('a playlist', () => {
  it('becomes one job per entry, grouped; private and too long entries are skipped and reported', { timeout: 120_000 }, async () => {
    site.add('ep-one', { title: 'Episode one', media: wav({ seconds: 1 }), vtt: captions('the first episode') });
    site.add('ep-two', { title: 'Episode two', media: wav({ seconds: 1 }), vtt: captions('the second episode') });
    const feed = site.addFeed('show', {
      title: 'The show',
      items: [
        { page: 'ep-one', title: 'Episode one', duration: 2 },
        { page: 'gone', title: '[Private video]' },
        { page: 'ep-long', title: 'The long one', duration: 7200 },
        { page: 'ep-two', title: 'Episode two' },
      ],
    });
    const created = await createPlaylist(feed);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ sourceUrl: feed, status: 'expanding', jobs: [] });
    const id = created.body.id;

    const group = await waitForPlaylist(id, (g) => g.status === 'expanded' && g.jobs.every(isFinished));
    expect(group).toMatchObject({ title: 'The show', entryCount: 4, jobCount: 2, error: null, counts: { done: 2, failed: 0 } });
    expect(group.skipped.map((s: Json) => [s.index, s.code, s.title])).toEqual([
      [1, 'UNAVAILABLE', '[Private video]'],
      [2, 'MEDIA_TOO_LONG', 'The long one'],
    ]);
    expect(group.jobs.map((j: Json) => [j.title, j.status, j.groupId, j.transcript_source])).toEqual([
      ['Episode one', 'done', id, 'captions'],
      ['Episode two', 'done', id, 'captions'],
    ]);
    // The group's jobs are ordinary jobs: listed by group, each with its own transcript.
    const listed = await json(await fetch(`${h.url}/api/jobs?group=${id}`));
    expect(listed.total).toBe(2);
    expect(new Set(listed.items.map((j: Json) => j.id))).toEqual(new Set(group.jobs.map((j: Json) => j.id)));
    expect((await getJob(h.url, group.jobs[1].id)).segments.map((s: Json) => s.text)).toEqual(['the second episode']);
    // The skipped page was never visited.
    expect(site.hits).not.toContain('/watch/ep-long');
  });

  it('asked for twice while its jobs run is one group; cancelling the group cancels them; each job retries on its own', { timeout: 120_000 }, async () => {
    // No captions: the jobs wait for the backend's answer, which the fake gives only when told.
    site.add('talk-a', { title: 'Talk A', media: wav({ seconds: 1 }) });
    site.add('talk-b', { title: 'Talk B', media: wav({ seconds: 1 }) });
    const feed = site.addFeed('talks', { title: 'Talks', items: [{ page: 'talk-a', title: 'Talk A' }, { page: 'talk-b', title: 'Talk B' }] });
    const first = await createPlaylist(feed);
    expect(first.status).toBe(201);
    const again = await createPlaylist(feed);
    expect([again.status, again.body.id]).toEqual([200, first.body.id]);
    const id = first.body.id;
    const running = await waitForPlaylist(id, (g) => g.status === 'expanded' && g.jobs.length === 2 && g.jobs.every((j: Json) => j.stage === 'transcribing'));
    const third = await createPlaylist(feed);
    expect([third.status, third.body.id, third.body.jobs.length]).toEqual([200, id, 2]);

    const cancelled = await json(await fetch(`${h.url}/api/playlists/${id}`, { method: 'DELETE' }));
    expect(cancelled).toMatchObject({ status: 'cancelled', counts: { cancelled: 2 } });
    expect(cancelled.cancelledAt).toEqual(expect.any(String));

    // A job of a cancelled group is still retried on its own.
    const retried = await json(await fetch(`${h.url}/api/jobs/${running.jobs[0].id}/retry`, { method: 'POST' }));
    expect(retried).toMatchObject({ status: 'pending', groupId: id, runs: 2 });
    const submissions = await until(() => Promise.resolve(h.asr.jobs.filter((j) => j.externalId === running.jobs[0].id)), (l) => l.length === 2, { timeoutMs: 60_000, what: 'the second submission' });
    const submission = submissions[1]!;
    await h.asr.complete(submission, [{ start: 0, end: 1, text: 'talk a' }]);
    expect(await waitForJob(h.url, running.jobs[0].id, isFinished)).toMatchObject({ status: 'done' });
    expect((await getPlaylist(id)).counts).toMatchObject({ done: 1, cancelled: 1 });

    // Once nothing of it runs, the same URL is a new group.
    const later = await createPlaylist(feed);
    expect(later.status).toBe(201);
    expect(later.body.id).not.toBe(id);
    await waitForPlaylist(later.body.id, (g) => g.status === 'expanded');
    await fetch(`${h.url}/api/playlists/${later.body.id}`, { method: 'DELETE' });
  });

  it('that is empty fails with EMPTY_PLAYLIST; a single video with NOT_A_PLAYLIST', { timeout: 60_000 }, async () => {
    const empty = await createPlaylist(site.addFeed('nothing', { title: 'Nothing', items: [] }));
    expect(await waitForPlaylist(empty.body.id, (g) => g.status !== 'expanding')).toMatchObject({ status: 'failed', jobs: [], error: expect.stringMatching(/^EMPTY_PLAYLIST: /) });
    const single = await createPlaylist(site.add('lonely', { title: 'Lonely', media: wav({ seconds: 1 }) }));
    expect(await waitForPlaylist(single.body.id, (g) => g.status !== 'expanding')).toMatchObject({ status: 'failed', error: expect.stringMatching(/^NOT_A_PLAYLIST: /) });
  });

  it('at an internal address is refused (400 ADDRESS_NOT_ALLOWED), nothing created', async () => {
    for (const url of ['http://127.0.0.2:8080/feed.xml', 'http://169.254.169.254/latest/feed.xml']) {
      const res = await createPlaylist(url);
      expect(res.status, url).toBe(400);
      expect(res.body.code).toBe('ADDRESS_NOT_ALLOWED');
    }
    expect(await h.stack.orm.em.fork().count(TranscriptionGroup, { sourceUrl: { $like: '%feed.xml' } })).toBe(0);
  });

  it('expanded again after an attempt was cut off creates no entry twice and loses none', { timeout: 60_000 }, async () => {
    site.add('r-one', { title: 'R one', media: wav({ seconds: 1 }), vtt: captions('one') });
    site.add('r-two', { title: 'R two', media: wav({ seconds: 1 }), vtt: captions('two') });
    const em = h.stack.orm.em.fork();
    const now = new Date();
    const group = em.create(TranscriptionGroup, { id: crypto.randomUUID(), sourceUrl: 'http://127.0.0.1/cut-off', title: 'cut off', mode: 'none', status: 'expanding', jobCount: 0, skipped: [], createdAt: now, updatedAt: now });
    await em.flush();
    const entries = [
      { index: 0, url: `${site.url}/watch/r-one`, title: 'R one', duration: null },
      { index: 1, url: `${site.url}/watch/r-two`, title: 'R two', duration: null },
    ];
    // The first attempt created the first job's row, then stopped before its workflow started.
    const firstId = entryJobId(group.id, 0);
    await h.stack.jobs.create(em, {
      id: firstId,
      kind: 'transcription',
      status: 'pending',
      workflowId: `${h.stack.config.taskQueuePrefix}transcription:${firstId}`,
      within: async (tx) => {
        tx.create(Transcription, { jobId: firstId, title: 'R one', sourceKind: 'url', sourceUrl: entries[0]!.url, mode: 'none', groupId: group.id, groupIndex: 0 });
        await tx.flush();
      },
    });
    const activities = createPlaylistActivities({ config: h.stack.config, orm: h.stack.orm, jobs: h.stack.jobs, log: createLogger('silent'), temporal: h.stack.temporal });
    const listing = { title: 'Cut off', entryCount: 2, entries, skipped: [] };
    const env = new MockActivityEnvironment();
    // The retried attempt, and a second one overlapping it.
    await Promise.all([env.run(activities.transcriptionCreatePlaylistJobs, { groupId: group.id, listing }), env.run(activities.transcriptionCreatePlaylistJobs, { groupId: group.id, listing })]);
    const rows = await h.stack.orm.em.fork().find(Transcription, { groupId: group.id }, { orderBy: { groupIndex: 'asc' } });
    expect(rows.map((r) => [r.jobId, r.groupIndex])).toEqual([
      [firstId, 0],
      [entryJobId(group.id, 1), 1],
    ]);
    for (const row of rows) expect(await waitForJob(h.url, row.jobId, isFinished)).toMatchObject({ status: 'done', transcript_source: 'captions' });
    expect(await h.stack.orm.em.fork().count(Job, { id: { $in: rows.map((r) => r.jobId) } })).toBe(2);
    expect(await getPlaylist(group.id)).toMatchObject({ status: 'expanded', jobCount: 2, counts: { done: 2 } });
  });

  it('cancelled while expanding makes no job', { timeout: 60_000 }, async () => {
    const em = h.stack.orm.em.fork();
    const now = new Date();
    const group = em.create(TranscriptionGroup, { id: crypto.randomUUID(), sourceUrl: 'http://127.0.0.1/cancelled', title: 'x', mode: 'none', status: 'expanding', jobCount: 0, skipped: [], createdAt: now, updatedAt: now });
    await em.flush();
    const cancelled = await json(await fetch(`${h.url}/api/playlists/${group.id}`, { method: 'DELETE' }));
    expect(cancelled).toMatchObject({ status: 'cancelled', jobs: [] });
    const activities = createPlaylistActivities({ config: h.stack.config, orm: h.stack.orm, jobs: h.stack.jobs, log: createLogger('silent'), temporal: h.stack.temporal });
    const listing = { title: 'x', entryCount: 1, entries: [{ index: 0, url: `${site.url}/watch/r-one`, title: 'R one', duration: null }], skipped: [] };
    const made = await new MockActivityEnvironment().run(activities.transcriptionCreatePlaylistJobs, { groupId: group.id, listing });
    expect(made).toEqual({ jobs: 0, cancelled: true });
    expect(await h.stack.orm.em.fork().count(Transcription, { groupId: group.id })).toBe(0);
    expect(await getPlaylist(group.id)).toMatchObject({ status: 'cancelled', jobCount: 0 });
  });
});
