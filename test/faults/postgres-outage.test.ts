import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { type PostgresEndpoint, startEmbeddedPostgres } from '../../runtime/postgres.js';
import { api } from '../docindex/helpers.js';
import { TestRepo } from '../support/git.js';
import type { Json } from '../support/http.js';
import { freePort } from '../../fakes/ports.js';
import { enqueue, getItem, isFinished, recipeCaption, startRecipeHarness, type RecipeHarness } from '../support/recipes.js';
import { until } from '../support/until.js';

/**
 * Fault: PostgreSQL stopped while 20 indexing jobs and 20 recipe items are queued or running. This file runs its
 * own PostgreSQL (the run's shared one serves every other file). After the database returns, every job ends as it
 * would have (done), none stays queued, none ran twice.
 *
 * The outage (PG_OUTAGE_MS, 65 s here) outlasts every retry policy that would otherwise decide a job's fate: a
 * recipe phase's attempts (QUEUE_RETRY_ATTEMPTS of QUEUE_RETRY_BACKOFF_MS), the indexing steps' (three, from 1 s),
 * the pool's quick tries, and the bookkeeping writes' ten attempts (about 55 s of backoff). A 90-second
 * outage gives the same result (`PG_OUTAGE_MS=90000`); docs/jobs.md has the figures.
 */
const OUTAGE_MS = Number(process.env.PG_OUTAGE_MS ?? 65_000);
const JOBS = 20;

let dir: string;
let port: number;
let pg: PostgresEndpoint;
let h: RecipeHarness;
const log = createLogger('warn', 'outage-pg');
const startPg = () => startEmbeddedPostgres({ dataDir: dir, port, log });

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-outage-'));
  await fs.chmod(dir, 0o755); // as root, PostgreSQL runs as user postgres and must enter it
  port = await freePort();
  pg = await startPg();
  // Phases get the default attempt time: the outage, not a tight QUEUE_TIMEOUT_MS on a busy machine, is under test.
  h = await startRecipeHarness({ queues: ['recipes', 'indexing'], env: { DATABASE_URL: pg.url, CPU_COUNT: '4', QUEUE_CONCURRENCY: '2', QUEUE_TIMEOUT_MS: '30000' } });
});
afterAll(async () => {
  await h?.stop();
  await pg?.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

/** Reads through the API, which answers errors while the database is away. */
const tolerant = async <T>(read: () => Promise<T>): Promise<T | undefined> => read().catch(() => undefined);

describe('PostgreSQL stopped while jobs are queued and running', () => {
  it('loses no job and runs none twice', { timeout: OUTAGE_MS + 300_000 }, async () => {
    const repos = Array.from({ length: JOBS }, (_, i) => {
      const repo = new TestRepo(path.join(dir, 'repos', `lib-${i}`));
      repo.write({ 'README.md': `# Library ${i}\n\nLibrary ${i} keeps its documentation here.\n`, 'docs/guide.md': `# Guide ${i}\n\n## Install\n\nRun \`npm install lib-${i}\`.\n` });
      repo.commit();
      return repo;
    });
    h.llm.delayMs = 400;
    const libs = await Promise.all(repos.map((r) => api(h.stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: r.dir })));
    expect(libs.every((l) => l.status === 201)).toBe(true);
    const indexJobs = libs.map((l) => l.body.job.id as string);
    const posts = Array.from({ length: JOBS }, (_, i) => h.site.add(`outage-${i}`, { title: `Outage dish ${i}`, caption: recipeCaption(`Outage dish ${i}`) }));
    const items = (await Promise.all(posts.map((u) => enqueue(h.url, u)))).map((c) => c.body.id as string);
    expect(items).toHaveLength(JOBS);

    // Some work has started, most is still queued: then the database goes away.
    await until(() => Promise.all(items.map((id) => getItem(h.url, id))), (all) => all.some((i) => i.status !== 'pending'), {
      timeoutMs: 120_000,
      intervalMs: 200,
      what: 'an item starting',
    });
    const before = await snapshot(indexJobs, items);
    await pg.stop();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    pg = await startPg();

    const ended = await until(
      () => snapshot(indexJobs, items),
      (s) => s.pending === 0,
      { timeoutMs: 240_000, intervalMs: 1000, what: 'every job ending after the outage' },
    );
    const created = h.manager.created.map((c) => String(c.recipe.name));
    const figures = {
      outageMs: OUTAGE_MS,
      queued: 2 * JOBS,
      runningOrQueuedAtOutage: before.pending,
      completed: ended.done,
      failed: ended.failed,
      lost: ended.pending,
      duplicated: created.length - new Set(created).size + (await rerunJobs(indexJobs)),
    };
    console.log(`postgres outage figures: ${JSON.stringify(figures)}`);
    expect(ended.failedDetail).toEqual([]);
    expect(figures).toMatchObject({ completed: 2 * JOBS, failed: 0, lost: 0, duplicated: 0 });
    expect(new Set(created).size).toBe(JOBS);
  });
});

interface Snapshot {
  done: number;
  failed: number;
  pending: number;
  failedDetail: string[];
}

async function snapshot(indexJobs: string[], items: string[]): Promise<Snapshot> {
  const s: Snapshot = { done: 0, failed: 0, pending: 0, failedDetail: [] };
  const index = await Promise.all(indexJobs.map((id) => tolerant(async () => (await api(h.stack, 'GET', `/api/v1/jobs/${id}`)).body.job as Json)));
  const recipes = await Promise.all(items.map((id) => tolerant(() => getItem(h.url, id))));
  for (const j of index) {
    if (j?.status === 'done') s.done++;
    else if (j?.status === 'failed') {
      s.failed++;
      s.failedDetail.push(`index ${j.id}: ${j.error}`);
    } else s.pending++;
  }
  for (const i of recipes) {
    if (i?.status === 'success') s.done++;
    else if (i && isFinished(i)) {
      s.failed++;
      s.failedDetail.push(`recipe ${i.id}: ${i.status} ${i.error}`);
    } else s.pending++;
  }
  return s;
}

/** Index jobs that ran more than once: a job started again shows as more than one `running` status event. */
async function rerunJobs(indexJobs: string[]): Promise<number> {
  let n = 0;
  for (const id of indexJobs) {
    const rows: { n: string }[] = await h.stack.orm.em
      .fork()
      .execute(`select count(*) as n from job_event where stream = ? and event = 'status' and data->>'status' = 'running'`, [`job:${id}`]);
    if (Number(rows[0]?.n ?? 0) > 1) n++;
  }
  return n;
}
