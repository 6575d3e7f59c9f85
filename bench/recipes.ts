import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../runtime/config.js';
import { createLogger } from '../core/log.js';
import { Job } from '../db/entities/job.js';
import { setSlotLimit, slotsState } from '../jobs/slots.js';
import { startEmbeddedPostgres } from '../runtime/postgres.js';
import { startStack } from '../runtime/stack.js';
import { findTemporalCli, startDevServer } from '../runtime/temporal.js';
import { freePort } from '../fakes/ports.js';
import { FakeLlm, FakeRecipeManager, FakeSocialSite, FakeYtDlp } from '../fakes/recipe-fakes.js';
import { recipeCaption } from '../fakes/recipe-fakes.js';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/**
 * The whole recipe pipeline against the fakes: BENCH_ITEMS posts queued at once, at QUEUE_CONCURRENCY 2 and then 8
 * (the pool's limit changed between the rounds). Each item: yt-dlp (the stand-in; BENCH_REAL_YTDLP=1 for the real
 * one, a Python start per item), the post page, the fake model answering after BENCH_LLM_MS, the fake Mealie, the
 * picture. Reports items per minute and created -> success latency.
 */
export async function recipes(): Promise<void> {
  const items = Number(process.env.BENCH_ITEMS ?? 40);
  const llmMs = Number(process.env.BENCH_LLM_MS ?? 1000);
  const realYtDlp = process.env.BENCH_REAL_YTDLP === '1';
  const levels = (process.env.BENCH_CONCURRENCY ?? '2,8').split(',').map(Number);
  const log = createLogger('warn', 'bench');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-bench-'));
  await fs.chmod(dir, 0o755);
  const [pgPort, temporalPort, apiPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const [pg, temporal, site, llm, mealie, ytdlp] = await Promise.all([
    startEmbeddedPostgres({ dataDir: dir, port: pgPort, log }),
    findTemporalCli(log).then((cli) =>
      startDevServer({ cli, stateDir: path.join(dir, 'temporal'), port: temporalPort, uiPort: 0, headless: true, namespace: 'default', log }),
    ),
    FakeSocialSite.start(),
    FakeLlm.start(),
    FakeRecipeManager.start('mealie'),
    FakeYtDlp.create(),
  ]);
  llm.delayMs = llmMs;
  const config = loadConfig({
    DATA_DIR: path.join(dir, 'data'),
    DATABASE_URL: pg.url,
    TEMPORAL_ADDRESS: temporal.address,
    PORT: String(apiPort),
    LOG_LEVEL: 'warn',
    LLM_API_BASE_URL: llm.baseUrl,
    RECIPE_MANAGER_BASE_URL: mealie.url,
    RECIPE_MANAGER_TOKEN: mealie.token,
    QUEUE_CONCURRENCY: String(levels[0]),
    // The fake post site is on 127.0.0.1, which the outbound guard refuses unless allowed.
    OUTBOUND_ALLOW: '127.0.0.1',
    ...(!realYtDlp && { YTDLP_PATH: ytdlp.path }),
  });
  const stack = await startStack({ config, log, api: true, queues: ['recipes'], services: 'attach' });
  const url = stack.api!.url;
  let n = 0;
  const enqueueAll = async (count: number): Promise<string[]> =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const i = n++;
        const post = site.add(`bench-${i}`, { title: `Dish ${i}`, caption: recipeCaption(`Dish ${i}`), picture: true });
        const res = await fetch(`${url}/api/queue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: post }) });
        if (res.status !== 201) throw new Error(`POST /api/queue answered ${res.status}: ${await res.text()}`);
        return ((await res.json()) as { id: string }).id;
      }),
    );
  const waitAll = async (ids: string[]) => {
    const deadline = Date.now() + 15 * 60_000;
    for (;;) {
      const open = await stack.orm.em.fork().count(Job, { id: { $in: ids }, completedAt: null });
      if (!open) return;
      if (Date.now() > deadline) throw new Error(`${open} items did not finish`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  try {
    console.log(`machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model}, node ${process.version}`);
    console.log(`${items} items per round; the fake model answers after ${llmMs} ms; yt-dlp: ${realYtDlp ? 'the real one' : 'the stand-in'}`);
    await waitAll(await enqueueAll(3)); // warm-up: first workflow tasks, the pool workflow, yt-dlp lookup
    for (const level of levels) {
      await setSlotLimit(stack.temporal, config, 'recipes', level);
      llm.maxInFlight = 0;
      const t0 = performance.now();
      const ids = await enqueueAll(items);
      await waitAll(ids);
      const seconds = (performance.now() - t0) / 1000;
      const jobs = await stack.orm.em.fork().find(Job, { id: { $in: ids } });
      const ok = jobs.filter((j) => j.status === 'success');
      const latency = ok.map((j) => j.completedAt!.getTime() - j.createdAt.getTime());
      const work = ok.map((j) => j.completedAt!.getTime() - j.startedAt!.getTime());
      console.log(`QUEUE_CONCURRENCY=${level}: ${ok.length}/${items} success in ${seconds.toFixed(1)} s -> ${((ok.length / seconds) * 60).toFixed(0)} items/min; model calls at once at most ${llm.maxInFlight}`);
      console.log(`  created -> success p50 ${pct(latency, 50)} ms  p95 ${pct(latency, 95)} ms;  slot granted -> success p50 ${pct(work, 50)} ms  p95 ${pct(work, 95)} ms`);
      console.log(`  pool: ${JSON.stringify(await slotsState(stack.temporal, config, 'recipes').then((s) => s && { limit: s.limit, holders: s.holders.length, waiting: s.waiting.length }))}`);
    }
  } finally {
    await stack.stop();
    await Promise.allSettled([site.close(), llm.close(), mealie.close(), ytdlp.remove()]);
    await temporal.stop();
    await pg.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
