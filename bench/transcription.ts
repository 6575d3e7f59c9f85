import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../runtime/config.js';
import { createLogger } from '../core/log.js';
import { Job } from '../db/entities/job.js';
import { TranscriptionWebhook } from '../transcription/entities.js';
import { startEmbeddedPostgres } from '../runtime/postgres.js';
import { startStack } from '../runtime/stack.js';
import { findTemporalCli, startDevServer } from '../runtime/temporal.js';
import { FakeAsr } from '../fakes/fake-asr.js';
import { wav } from '../fakes/media.js';
import { freePort } from '../fakes/ports.js';
import { cueBuildingCost } from './transcription-cues.js';
import { FakeLlm } from '../fakes/recipe-fakes.js';
import { translationCost } from './transcription-translation.js';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/**
 * The whole transcription pipeline against the fake backend: N jobs uploaded at once (each a 5 s WAV, mode auto:
 * an ffmpeg analysis and a conversion), submitted, called back by the backend after BACKEND_MS, finished.
 * Reports jobs per minute, and the time from the API receiving the webhook to the job being `done`.
 */
export async function transcription(): Promise<void> {
  const jobsWanted = Number(process.env.BENCH_JOBS ?? 50);
  const backendMs = Number(process.env.BENCH_BACKEND_MS ?? 250);
  const log = createLogger('warn', 'bench');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-bench-'));
  await fs.chmod(dir, 0o755);
  const [pgPort, temporalPort, apiPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const [pg, temporal, asr, llm] = await Promise.all([
    startEmbeddedPostgres({ dataDir: dir, port: pgPort, log }),
    findTemporalCli(log).then((cli) =>
      startDevServer({ cli, stateDir: path.join(dir, 'temporal'), port: temporalPort, uiPort: 0, headless: true, namespace: 'default', log }),
    ),
    FakeAsr.start(),
    FakeLlm.start(),
  ]);
  asr.autoCompleteMs = backendMs;
  const config = loadConfig({
    DATA_DIR: path.join(dir, 'data'),
    DATABASE_URL: pg.url,
    TEMPORAL_ADDRESS: temporal.address,
    PORT: String(apiPort),
    PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}`,
    ASR_BASE_URL: asr.url,
    LLM_API_BASE_URL: llm.baseUrl,
    LLM_MODEL: 'fake-model',
    LOG_LEVEL: 'warn',
    UPLOAD_MAX_BYTES: '10mb',
  });
  const stack = await startStack({ config, log, api: true, queues: ['transcription'], services: 'attach' });
  const url = stack.api!.url;
  const audio = wav({ seconds: 5, pauses: true, noise: 0.001 });
  const create = async (i: number): Promise<string> => {
    const form = new FormData();
    form.set('file', new Blob([audio], { type: 'audio/wav' }), `bench-${i}.wav`);
    form.set('mode', 'auto');
    const res = await fetch(`${url}/api/jobs`, { method: 'POST', body: form });
    if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  };
  const waitAll = async (ids: string[]) => {
    const deadline = Date.now() + 10 * 60_000;
    for (;;) {
      const open = await stack.orm.em.fork().count(Job, { id: { $in: ids }, completedAt: null });
      if (!open) return;
      if (Date.now() > deadline) throw new Error(`${open} jobs did not finish`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  try {
    console.log(`machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model}, node ${process.version}`);
    cueBuildingCost();
    console.log(`fake backend answers ${backendMs} ms after a submission; each job: 5 s WAV upload, mode auto`);
    // Warm-up: the workers' first workflow tasks and activities, ffmpeg's first start.
    await waitAll(await Promise.all(Array.from({ length: 3 }, (_, i) => create(i))));

    const t0 = performance.now();
    const ids = await Promise.all(Array.from({ length: jobsWanted }, (_, i) => create(100 + i)));
    const tCreated = performance.now();
    await waitAll(ids);
    const seconds = (performance.now() - t0) / 1000;

    const em = stack.orm.em.fork();
    const jobs = await em.find(Job, { id: { $in: ids } });
    const hooks = new Map((await em.find(TranscriptionWebhook, { jobId: { $in: ids } })).map((w) => [w.jobId, w]));
    const done = jobs.filter((j) => j.status === 'done');
    const hookToDone = done.map((j) => j.completedAt!.getTime() - hooks.get(j.id)!.receivedAt.getTime());
    const createdToDone = done.map((j) => j.completedAt!.getTime() - j.createdAt.getTime());
    console.log(`jobs    ${done.length}/${jobsWanted} done (${jobs.length - done.length} not) in ${seconds.toFixed(1)} s; all ${jobsWanted} created in ${((tCreated - t0) / 1000).toFixed(1)} s`);
    console.log(`rate    ${((done.length / seconds) * 60).toFixed(0)} jobs/min through the whole pipeline (${jobsWanted} concurrent)`);
    console.log(
      `webhook received -> done   p50 ${pct(hookToDone, 50)} ms  p95 ${pct(hookToDone, 95)} ms  max ${Math.max(...hookToDone)} ms`,
    );
    console.log(`created -> done            p50 ${pct(createdToDone, 50)} ms  p95 ${pct(createdToDone, 95)} ms`);
    const at90 = new Map<string, number>();
    for (const j of done) {
      const rows: { created_at: Date }[] = await em.execute(
        `select created_at from job_event where stream = ? and event = 'status' and (data->>'progress')::int = 90 order by seq limit 1`,
        [`job:${j.id}`],
      );
      if (rows[0]) at90.set(j.id, new Date(rows[0].created_at).getTime());
    }
    const hookTo90 = done.map((j) => at90.get(j.id)! - hooks.get(j.id)!.receivedAt.getTime());
    const from90 = done.map((j) => j.completedAt!.getTime() - at90.get(j.id)!);
    console.log(`  of which: received -> processing 90  p50 ${pct(hookTo90, 50)} ms  p95 ${pct(hookTo90, 95)} ms;  90 -> done p50 ${pct(from90, 50)} ms  p95 ${pct(from90, 95)} ms`);
    if (done[0]) await translationCost({ url, orm: stack.orm, jobId: done[0].id, llm });
    const mem = process.memoryUsage();
    console.log(`rss ${(mem.rss / 2 ** 20).toFixed(0)} MiB, heap ${(mem.heapUsed / 2 ** 20).toFixed(0)} MiB`);
  } finally {
    await stack.stop();
    await asr.close();
    await llm.close();
    await temporal.stop();
    await pg.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
