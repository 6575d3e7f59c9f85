import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../core/log.js';
import { ensureSchedule } from '../../../jobs/schedules.js';
import { createRefreshActivities, type RefreshOutcome, type RefreshPlan } from '../../../docindex/refresh/activities.js';
import {
  describeRefresh,
  ensureRefreshSchedule,
  pauseRefresh,
  reconcileRefreshSchedules,
  refreshNow,
  refreshScheduleId,
  unpauseRefresh,
} from '../../../docindex/refresh/schedules.js';
import { type GitHost, startGitHost, TestRepo } from '../../support/git.js';
import { startTestStack, type TestStack } from '../../support/stack.js';
import { until } from '../../support/until.js';
import { api, enc, snippetsOf, waitForJob } from '../helpers.js';

const TOKEN = 'refresh-test-token-1234';
const LIB = '/acme/widgets';
let stack: TestStack;
let host: GitHost;
let tmp: string;
let repo: TestRepo;
let bare: string;

beforeAll(async () => {
  stack = await startTestStack({ env: { INDEX_VERSION_POLICY: 'minors:2' } });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-refresh-'));
  repo = new TestRepo(path.join(tmp, 'work'));
  repo.write({ 'README.md': '# Widgets\n\nWidgets render themselves into a page when mounted.\n' });
  repo.commit('first');
  repo.tag('v1.0.0', true).tag('v1.0.1');
  repo.write({ 'docs/mount.md': '# Mounting\n\nMount a widget into an element to show it on the page.\n' });
  repo.commit('second');
  repo.tag('v1.1.0').tag('v2.0.0-rc.1');
  bare = repo.publish(path.join(tmp, 'host'), 'acme', 'widgets');
  host = await startGitHost(path.join(tmp, 'host'), TOKEN);
  const res = await api(stack, 'POST', '/api/v1/libs', { source: 'git-host', sourceUrl: `${host.url}/acme/widgets.git`, gitHostToken: TOKEN });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect((await waitForJob(stack, res.body.job.id)).status).toBe('done');
});
afterAll(async () => {
  await stack?.stop();
  await host?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const log = createLogger('warn', 'refresh-test');
const deps = () => ({ config: stack.config, orm: stack.orm, temporal: stack.temporal, jobs: stack.jobs, log });

const jobCount = async () => Number(((await stack.orm.em.fork().execute(`select count(*) as n from job where kind = 'index'`)) as [{ n: string }])[0].n);
const versionsOf = async () =>
  ((await stack.orm.em.fork().execute(`select tag, state, commit_hash from library_version where repository_id = ? order by tag`, [LIB])) as {
    tag: string;
    state: string;
    commit_hash: string | null;
  }[]);

/** The result of the schedule's next run, `after` runs it had taken already. */
async function nextRun(after: number): Promise<RefreshPlan & RefreshOutcome> {
  const handle = stack.temporal.schedule.getHandle(refreshScheduleId(stack.config, LIB));
  const d = await until(() => handle.describe(), (x) => x.info.numActionsTaken > after, { timeoutMs: 30_000, what: 'a refresh run' });
  // The first run after them, not the latest: on a short interval (2 s, below) a busy machine may see two.
  const actions = d.info.recentActions;
  const { workflowId, firstExecutionRunId } = actions[actions.length - (d.info.numActionsTaken - after)]!.action.workflow;
  return stack.temporal.workflow.getHandle(workflowId, firstExecutionRunId).result();
}

async function runsTaken(): Promise<number> {
  return (await stack.temporal.schedule.getHandle(refreshScheduleId(stack.config, LIB)).describe()).info.numActionsTaken;
}

/** Triggers the library's schedule and answers what its run did. */
async function refresh(): Promise<RefreshPlan & RefreshOutcome> {
  const before = await runsTaken();
  expect(await refreshNow(deps(), LIB)).toBe(true);
  return nextRun(before);
}

async function waitForAll(ids: (string | null)[]) {
  for (const id of ids) if (id) expect((await waitForJob(stack, id)).status).toBe('done');
}

describe('a library refreshed by its schedule', () => {
  it('has a schedule at the default interval, visible and pausable', async () => {
    // Registering the library created it; ensuring it again changes nothing.
    expect(await ensureRefreshSchedule(deps(), { id: LIB, refreshEvery: null })).toBe('unchanged');
    expect(await describeRefresh(deps(), LIB)).toMatchObject({ every: 86_400_000, paused: false });
    expect(await pauseRefresh(deps(), LIB, 'quiet please')).toBe(true);
    // Reconciling at start leaves the pause alone.
    expect(await reconcileRefreshSchedules(deps())).toEqual({ ensured: 1, removed: 0, failed: 0 });
    expect(await describeRefresh(deps(), LIB)).toMatchObject({ paused: true, note: 'quiet please' });
    expect(await unpauseRefresh(deps(), LIB)).toBe(true);
  });

  it('registers and indexes the versions its policy wants, the branch being unchanged', async () => {
    const jobsBefore = await jobCount();
    const run = await refresh();
    expect(run).toMatchObject({ reindex: false, reindexJobId: null });
    // minors:2: the newest patch of 1.1 and of 1.0; never the pre-release.
    expect(run.newVersions.map((v) => v.tag)).toEqual(['v1.1.0', 'v1.0.1']);
    await waitForAll(run.versions.map((v) => v.jobId));
    expect(await jobCount()).toBe(jobsBefore + 2);
    const versions = await versionsOf();
    expect(versions.map((v) => [v.tag, v.state])).toEqual([
      ['v1.0.1', 'indexed'],
      ['v1.1.0', 'indexed'],
    ]);
    expect(versions.every((v) => /^[0-9a-f]{40}$/.test(v.commit_hash ?? ''))).toBe(true);
    expect((await snippetsOf(stack, LIB, `${LIB}/v1.0.1`)).map((s) => s.file_path)).toEqual(['README.md']);
  });

  it('starts no job when nothing moved, and registers nothing twice', async () => {
    const jobsBefore = await jobCount();
    const versionsBefore = await versionsOf();
    const run = await refresh();
    expect(run).toMatchObject({ reindex: false, newVersions: [], reindexJobId: null, versions: [] });
    expect(await jobCount()).toBe(jobsBefore);
    expect(await versionsOf()).toEqual(versionsBefore);
  });

  it('has each step heartbeat, so one whose result Temporal could not take runs again within a minute', async () => {
    await refresh();
    const d = await stack.temporal.schedule.getHandle(refreshScheduleId(stack.config, LIB)).describe();
    const { workflowId, firstExecutionRunId } = d.info.recentActions.at(-1)!.action.workflow;
    const history = await stack.temporal.workflow.getHandle(workflowId, firstExecutionRunId).fetchHistory();
    const scheduled = history.events!.map((e) => e.activityTaskScheduledEventAttributes).filter((a) => !!a);
    expect(scheduled.map((a) => [a.activityType!.name, Number(a.heartbeatTimeout?.seconds ?? 0)])).toEqual([
      ['planRefresh', 60],
      ['applyRefresh', 60],
    ]);
  });

  it('applies one plan once, however often and concurrently it is retried', async () => {
    const refreshActivities = createRefreshActivities(deps());
    // Each call an attempt of its own, in an activity's context as a worker would run it.
    const activities = { applyRefresh: (plan: RefreshPlan): Promise<RefreshOutcome> => new MockActivityEnvironment().run(refreshActivities.applyRefresh, plan) };
    repo.tag('v1.1.1');
    repo.push(bare);
    const plan: RefreshPlan = { libraryId: LIB, reindex: false, revision: null, newVersions: [{ tag: 'v1.1.1', commit: null }] };
    const outcomes = await Promise.all([activities.applyRefresh(plan), activities.applyRefresh(plan), activities.applyRefresh(plan)]);
    const jobIds = new Set(outcomes.flatMap((o) => o.versions.map((v) => v.jobId)));
    expect(jobIds.size).toBe(1); // the attempts joined one job
    await waitForAll([...jobIds]);
    expect((await versionsOf()).filter((v) => v.tag === 'v1.1.1')).toHaveLength(1);
    // A late retry after the job finished starts nothing more.
    const jobsBefore = await jobCount();
    expect(await activities.applyRefresh(plan)).toEqual({ reindexJobId: null, versions: [] });
    expect(await jobCount()).toBe(jobsBefore);
  });

  it('skips while the library is being indexed', async () => {
    const release = host.stall();
    try {
      const res = await api(stack, 'POST', `/api/v1/libs/${enc(LIB)}/index`);
      const run = await refresh();
      expect(run).toMatchObject({ skipped: 'indexing', reindexJobId: null, versions: [] });
      release();
      // Re-indexing a library re-indexes its versions too.
      await waitForAll([res.body.job.id, ...res.body.versionJobs.map((j: { id: string }) => j.id)]);
    } finally {
      release();
    }
  });

  it('re-indexes a moved branch and indexes a new tag at its interval, with nobody asking', async () => {
    repo.write({ 'docs/unmount.md': '# Unmounting\n\nUnmount a widget to remove it from the page and free its memory.\n' });
    const head = repo.commit('third');
    repo.tag('v1.2.0');
    repo.push(bare);
    // The schedule's own interval, shortened below the settings' minute for the test.
    const before = await runsTaken();
    await ensureSchedule(stack.temporal, {
      scheduleId: refreshScheduleId(stack.config, LIB),
      every: 2000,
      workflowType: 'refreshLibraryWorkflow',
      taskQueue: `${stack.config.taskQueuePrefix}indexing`,
      args: [{ libraryId: LIB }],
    });
    const run = await nextRun(before);
    await ensureRefreshSchedule(deps(), { id: LIB, refreshEvery: null }); // back to a day
    expect(run).toMatchObject({ reindex: true, revision: head });
    expect(run.newVersions.map((v) => v.tag)).toEqual(['v1.2.0']);
    await waitForAll([run.reindexJobId, ...run.versions.map((v) => v.jobId)]);
    expect((await snippetsOf(stack, LIB)).map((s) => s.file_path)).toContain('docs/unmount.md');
    expect((await snippetsOf(stack, LIB, `${LIB}/v1.2.0`)).map((s) => s.file_path)).toContain('docs/unmount.md');
    const [lib] = (await stack.orm.em.fork().execute('select last_commit from library where id = ?', [LIB])) as { last_commit: string }[];
    expect(lib!.last_commit).toBe(head);
  });

  it('has its schedule removed with the library, and a schedule that outlived its library removes itself', async () => {
    expect((await api(stack, 'DELETE', `/api/v1/libs/${enc(LIB)}`)).status).toBe(200);
    expect(await describeRefresh(deps(), LIB)).toBeNull();
    // A schedule left behind (deleted while the library was being removed) finds it gone on its next run.
    expect(await ensureRefreshSchedule(deps(), { id: LIB, refreshEvery: null })).toBe('created');
    const before = await runsTaken();
    await refreshNow(deps(), LIB);
    expect(await nextRun(before)).toMatchObject({ skipped: 'library deleted' });
    expect(await describeRefresh(deps(), LIB)).toBeNull();
  });

  it('has no schedule when its interval is off', async () => {
    expect(await ensureRefreshSchedule(deps(), { id: '/acme/other', refreshEvery: '6h' })).toBe('created');
    expect((await describeRefresh(deps(), '/acme/other'))!.every).toBe(6 * 3_600_000);
    expect(await ensureRefreshSchedule(deps(), { id: '/acme/other', refreshEvery: 'off' })).toBe('removed');
    expect(await describeRefresh(deps(), '/acme/other')).toBeNull();
  });
});
