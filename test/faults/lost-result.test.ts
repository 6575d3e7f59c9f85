import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { scopeLockKey } from '../../docindex/pipeline.js';
import { readEvents } from '../../jobs/events.js';
import { api } from '../docindex/helpers.js';
import type { Json } from '../support/http.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { startTcpRelay, type TcpRelay } from '../support/tcp-relay.js';
import { until } from '../support/until.js';
import { killWorker, startWorkerProcess } from '../support/worker-process.js';

/**
 * Fault: a step ends while its worker cannot reach the Temporal server (the server was down, or restarting after
 * PostgreSQL did), so the server never learns the step's result and still counts the attempt as running. The worker
 * reaches Temporal through a relay the test cuts. The step is run again once its heartbeats stop (seconds), not after
 * its start-to-close timeout (2 hours for the crawl, which swaps the snippets in at its end: docindex/pipeline.ts,
 * OpenSwap), and the job completes once with its snippets.
 */
const PAGE = (i: number) =>
  `# Page ${i}\n\nHow to configure the widget number ${i} for a server that restarts while a client waits:\n\n\`\`\`js\nconst widget${i} = createWidget({ retries: ${i}, timeoutMs: 1000 });\nawait widget${i}.start();\n\`\`\`\n`;
/** A folder with no git remote is the library `/local/<its name>` (docindex/ids.ts). */
const FOLDER = 'lost-docs';
const LIBRARY = `/local/${FOLDER}`;
const LOCK = scopeLockKey({ repositoryId: LIBRARY, versionId: null });
let stack: TestStack;
let dir: string;
let relay: TcpRelay;
let worker: (ChildProcess & { output: () => string }) | undefined;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-lost-result-'));
  relay = await startTcpRelay(inject('temporalAddress'));
  stack = await startTestStack({ queues: [] });
});
afterAll(async () => {
  if (worker) await killWorker(worker);
  await stack?.stop();
  await relay?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('an indexing swap whose result the Temporal server could not take', () => {
  it('is run again after its heartbeat timeout, and the job is done once with its snippets', { timeout: 240_000 }, async () => {
    worker = await startWorkerProcess(stack, ['indexing'], { TEMPORAL_ADDRESS: relay.address, INDEXING_HEARTBEAT_TIMEOUT_MS: '3000' });
    const folder = path.join(dir, FOLDER);
    await fs.mkdir(folder);
    for (let i = 0; i < 3; i++) await fs.writeFile(path.join(folder, `page-${i}.md`), PAGE(i));
    // The test holds the swap's lock (docindex/pipeline.ts, scopeLockKey), so the swap waits until the relay is cut.
    const lock = new pg.Client({ connectionString: stack.databaseUrl });
    await lock.connect();
    try {
      await lock.query('select pg_advisory_lock(hashtext($1))', [LOCK]);
      const added = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: folder });
      expect(added.status, JSON.stringify(added.body)).toBe(201);
      expect(added.body.library.id).toBe(LIBRARY);
      const jobId = added.body.job.id as string;
      await until(
        async () => (await lock.query(`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`)).rows[0].n as number,
        (n) => n > 0,
        { timeoutMs: 120_000, intervalMs: 50, what: 'the swap waiting for its lock' },
      );
      relay.cut();
      await lock.query('select pg_advisory_unlock(hashtext($1))', [LOCK]);
      // The swap commits; the worker tries to report it for a while, then gives up.
      await until(async () => worker!.output(), (o) => o.includes('while completing activity'), { timeoutMs: 60_000, what: 'the worker giving up reporting the swap' });
      relay.restore();

      const job = await until(async () => (await api(stack, 'GET', `/api/v1/jobs/${jobId}`)).body.job as Json, (j) => ['done', 'failed'].includes(j.status), {
        timeoutMs: 90_000,
        what: 'the job finishing (without a heartbeat the crawl would wait 2 hours to be run again)',
      });
      expect(job.status, JSON.stringify(job)).toBe('done');
      // The crawl ran twice: the second found every file as the first swapped it in, and kept what it wrote.
      const pages = (await lock.query('select count(distinct document_id)::int as n from snippet where repository_id = $1', [LIBRARY])).rows[0].n as number;
      expect(pages).toBe(3);
      const done = (await readEvents(stack.orm.em.fork(), `job:${jobId}`, 0)).filter((e) => e.event === 'status' && e.data.status === 'done');
      expect(done).toHaveLength(1);
      console.log(`lost swap result figures: ${JSON.stringify({ queued: 1, completed: 1, lost: 0, duplicated: 0, pagesWithSnippets: pages })}`);
    } finally {
      await lock.end();
    }
  });
});
