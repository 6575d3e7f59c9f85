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
import { FakeLlm, FakeRecipeManager, FakeSocialSite, FakeYtDlp, type FakeYtDlpPost } from '../fakes/recipe-fakes.js';
import { recipeCaption } from '../fakes/recipe-fakes.js';
import { FakeAsr } from '../fakes/fake-asr.js';
import { wav } from '../fakes/media.js';
import { RecipeItem } from '../recipes/entities.js';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/**
 * The whole recipe pipeline against the fakes: BENCH_ITEMS posts queued at once, at QUEUE_CONCURRENCY 2 and then 8
 * (the pool's limit changed between the rounds). Each item: yt-dlp (the stand-in; BENCH_REAL_YTDLP=1 for the real
 * one, a Python start per item), the post page, the fake model answering after BENCH_LLM_MS, the fake Mealie, the
 * picture. Reports items per minute and created -> success latency.
 *
 * Then the speech step (docs/recipes.md, "The video's speech"): BENCH_SPEECH_ITEMS posts whose caption is the recipe,
 * then as many whose caption says only "recipe in the video" (a BENCH_SPEECH_SECONDS video, the stand-in yt-dlp, the
 * real ffmpeg, the fake callback backend answering after BENCH_ASR_MS), at the first concurrency level: the added
 * time per item is the difference of their slot -> success medians; the speech step's own duration is printed too.
 * BENCH_SPEECH_ITEMS=0 leaves it out.
 */
export async function recipes(): Promise<void> {
  const items = Number(process.env.BENCH_ITEMS ?? 40);
  const llmMs = Number(process.env.BENCH_LLM_MS ?? 1000);
  const realYtDlp = process.env.BENCH_REAL_YTDLP === '1';
  const levels = (process.env.BENCH_CONCURRENCY ?? '2,8').split(',').map(Number);
  const speechItems = Number(process.env.BENCH_SPEECH_ITEMS ?? 10);
  const speechSeconds = Number(process.env.BENCH_SPEECH_SECONDS ?? 30);
  const asrMs = Number(process.env.BENCH_ASR_MS ?? 1000);
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
  const asr = await FakeAsr.start();
  asr.autoCompleteMs = asrMs;
  asr.result = (job) => ({ id: job.id, status: 'completed', segments: ['- 200 g spaghetti', '- 1 lemon', '1. Boil the pasta.', '2. Toss with lemon.'].map((text, i) => ({ start: i, end: i + 0.9, text })) });
  const audio = path.join(dir, 'speech.wav');
  await fs.writeFile(audio, wav({ seconds: speechSeconds, pauses: true }));
  const config = loadConfig({
    DATA_DIR: path.join(dir, 'data'),
    DATABASE_URL: pg.url,
    TEMPORAL_ADDRESS: temporal.address,
    PORT: String(apiPort),
    PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}`,
    ASR_BASE_URL: asr.url,
    LOG_LEVEL: 'warn',
    LLM_API_BASE_URL: llm.baseUrl,
    RECIPE_MANAGER_BASE_URL: mealie.url,
    RECIPE_MANAGER_TOKEN: mealie.token,
    QUEUE_CONCURRENCY: String(levels[0]),
    // The fake post site is on 127.0.0.1, which the outbound guard refuses unless allowed.
    OUTBOUND_ALLOW: '127.0.0.1',
    ...(!realYtDlp && { YTDLP_PATH: ytdlp.path }),
  });
  const stack = await startStack({ config, log, api: true, queues: ['recipes', 'transcription'], services: 'attach' });
  const url = stack.api!.url;
  let n = 0;
  const videos: Record<string, FakeYtDlpPost> = {};
  /** A post whose caption says only "recipe in the video", with a video the stand-in yt-dlp serves. */
  const videoPost = async (i: number): Promise<string> => {
    const post = site.add(`bench-${i}`, { title: `Dish ${i}`, caption: 'Recipe in the video!', picture: true });
    videos[post] = { info: { title: `Dish ${i}`, description: 'Recipe in the video!', extractor_key: 'Instagram', duration: speechSeconds, ext: 'mp4' }, media: audio };
    await ytdlp.set(videos);
    return post;
  };
  const enqueueAll = async (count: number, speech = false): Promise<string[]> => {
    // The posts first (the stand-in yt-dlp reads its list from one file), then all queued at once.
    const posts: string[] = [];
    for (let k = 0; k < count; k++) {
      const i = n++;
      posts.push(speech ? await videoPost(i) : site.add(`bench-${i}`, { title: `Dish ${i}`, caption: recipeCaption(`Dish ${i}`), picture: true }));
    }
    return Promise.all(
      posts.map(async (post) => {
        const res = await fetch(`${url}/api/queue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: post }) });
        if (res.status !== 201) throw new Error(`POST /api/queue answered ${res.status}: ${await res.text()}`);
        return ((await res.json()) as { id: string }).id;
      }),
    );
  };
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
    if (speechItems > 0) await speechRound({ stack, config, levels, speechItems, speechSeconds, asrMs, enqueueAll, waitAll });
  } finally {
    await stack.stop();
    await Promise.allSettled([site.close(), llm.close(), mealie.close(), ytdlp.remove(), asr.close()]);
    await temporal.stop();
    await pg.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

interface SpeechRound {
  stack: Awaited<ReturnType<typeof startStack>>;
  config: ReturnType<typeof loadConfig>;
  levels: number[];
  speechItems: number;
  speechSeconds: number;
  asrMs: number;
  enqueueAll: (count: number, speech?: boolean) => Promise<string[]>;
  waitAll: (ids: string[]) => Promise<void>;
}

/** The speech step's added time per item: caption posts, then "recipe in the video" posts, at the first level. */
async function speechRound(r: SpeechRound): Promise<void> {
  const level = r.levels[0]!;
  await setSlotLimit(r.stack.temporal, r.config, 'recipes', level);
  const round = async (speech: boolean) => {
    const t0 = performance.now();
    const ids = await r.enqueueAll(r.speechItems, speech);
    await r.waitAll(ids);
    const seconds = (performance.now() - t0) / 1000;
    const all = await r.stack.orm.em.fork().find(Job, { id: { $in: ids } });
    const errors = [...new Set(all.filter((j) => j.status !== 'success').map((j) => j.error))];
    if (errors.length) console.log(`  failed: ${errors.join('; ')}`);
    const jobs = all.filter((j) => j.status === 'success');
    const items = await r.stack.orm.em.fork().find(RecipeItem, { jobId: { $in: ids } });
    const steps = items
      .map((i) => i.phases.find((p) => p.name === 'extraction')?.steps?.find((s) => s.name === 'speech'))
      .filter((s) => s?.startedAt && s.completedAt)
      .map((s) => Date.parse(s!.completedAt!) - Date.parse(s!.startedAt!));
    return { ok: jobs.length, seconds, work: jobs.map((j) => j.completedAt!.getTime() - j.startedAt!.getTime()), steps };
  };
  console.log(`speech step: ${r.speechItems} items per round at QUEUE_CONCURRENCY=${level}; a ${r.speechSeconds} s video, the fake backend answering after ${r.asrMs} ms`);
  await r.waitAll(await r.enqueueAll(2, true)); // warm-up: the transcription queue's first tasks, ffmpeg lookup
  const caption = await round(false);
  const speech = await round(true);
  const p50 = (xs: number[]) => (xs.length ? pct(xs, 50) : NaN);
  console.log(`  caption posts: ${caption.ok}/${r.speechItems} success in ${caption.seconds.toFixed(1)} s; slot granted -> success p50 ${p50(caption.work)} ms  p95 ${pct(caption.work, 95)} ms`);
  console.log(`  "recipe in the video": ${speech.ok}/${r.speechItems} success in ${speech.seconds.toFixed(1)} s; slot granted -> success p50 ${p50(speech.work)} ms  p95 ${pct(speech.work, 95)} ms`);
  console.log(`  added per item by the speech step: p50 ${p50(speech.work) - p50(caption.work)} ms (the step itself: p50 ${p50(speech.steps)} ms  p95 ${pct(speech.steps, 95)} ms)`);
}
