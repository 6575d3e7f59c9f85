import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ActivityDeps } from '../../activities/deps.js';
import { withProgress } from '../../activities/heartbeat.js';
import { PermanentError } from '../../core/errors.js';
import { Job } from '../../db/entities/job.js';
import { jobStopped, owns } from '../../jobs/ownership.js';
import { chatJson, llmEndpoint } from '../../llm/chat.js';
import { subtitleRules } from '../configuration.js';
import { Transcription } from '../entities.js';
import { TRANSCRIPTION_STATUSES } from '../kind.js';
import { outputDir, runDir } from '../paths.js';
import { setStage, type StoreDeps } from '../results.js';
import type { NumberedSegment } from '../transcripts/segments.js';
import { TRANSCRIPT_FORMATS } from '../transcripts/writers.js';
import type { ExtraTask } from './contract.js';
import { TranscriptExtra } from './entities.js';
import { TranscriptExtras } from './service.js';
import { languageName } from '../../core/languages.js';
import { assembleSummary, combineAsk, type PartSummary, partAsk, readCombined, readPart, renderSummary } from './summary.js';
import { chunkCount, chunkRange, readTranslation, renderTranslation, type SourceLine, sourceLines, translationAsk } from './translation.js';

/**
 * The steps of a translation or summary (transcription/derived/workflow.ts runs them), each safe to run twice:
 * `prepare` snapshots what is translated or summarised into the run's folder; each chunk's answer is kept there
 * too (a chunk answered once is not asked again); `finish` writes the files and stores the result with `done` in
 * one transaction, for the run that owns the job only (jobs/ownership.ts).
 */

interface Ref {
  jobId: string;
  runId: string;
}

/** What the run works from: the transcript as it was when the run began. */
interface Snapshot {
  task: ExtraTask;
  language: string | null;
  title: string;
  sourceUrl: string | null;
  /** Translation: the original's cues as lines; summary: the segments. */
  lines?: SourceLine[];
  segments?: NumberedSegment[];
  chunkSize: number;
  chunks: number;
}

const file = (d: ActivityDeps, ref: Ref, name: string) => path.join(runDir(d.config.dataDir, ref.jobId, ref.runId), name);

async function readJson<T>(p: string): Promise<T | undefined> {
  const text = await fs.readFile(p, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as T);
}

/** Written whole or not at all: a second attempt finds either nothing or the complete file. */
async function writeJson(p: string, value: unknown): Promise<void> {
  await fs.mkdir(path.dirname(p), { recursive: true });
  const tmp = `${p}.${randomBytes(4).toString('hex')}.tmp`;
  await fs.writeFile(tmp, JSON.stringify(value));
  await fs.rename(tmp, p);
}

async function owned(d: ActivityDeps, ref: Ref): Promise<void> {
  const job = await d.orm.em.fork().findOne(Job, { id: ref.jobId });
  if (!job || !owns(job, ref.runId)) jobStopped();
}

const store = (d: ActivityDeps): StoreDeps => ({ config: d.config, jobs: d.jobs, em: () => d.orm.em.fork() });

async function stage(d: ActivityDeps, ref: Ref, progress: number, name: string, detail: string): Promise<void> {
  if (!(await setStage(store(d), { ...ref, progress, stage: name, stageDetail: detail }))) jobStopped();
}

async function prepare(d: ActivityDeps, ref: Ref): Promise<{ chunks: number; task: ExtraTask }> {
  await owned(d, ref);
  const saved = await readJson<Snapshot>(file(d, ref, 'source.json'));
  if (saved) return { chunks: saved.chunks, task: saved.task };
  const em = d.orm.em.fork();
  const extra = await em.findOneOrFail(TranscriptExtra, { jobId: ref.jobId });
  const row = await em.findOne(Transcription, { jobId: extra.transcriptionJobId });
  const parent = await em.findOne(Job, { id: extra.transcriptionJobId });
  if (!row || !parent || parent.status !== TRANSCRIPTION_STATUSES.done || !row.segmentsJson) {
    throw new PermanentError(`TRANSCRIPT_NOT_READY: job ${extra.transcriptionJobId} has no transcript (it is ${parent?.status ?? 'gone'})`);
  }
  const segments = JSON.parse(row.segmentsJson) as NumberedSegment[];
  const c = d.config.transcriptExtras;
  const task = extra.task as ExtraTask;
  const snapshot: Snapshot =
    task === 'translation'
      ? (() => {
          const lines = sourceLines(segments, subtitleRules(d.config.transcription));
          return { task, language: extra.language ?? null, title: row.title, sourceUrl: row.sourceUrl ?? null, lines, chunkSize: c.translationChunkLines, chunks: chunkCount(lines.length, c.translationChunkLines) };
        })()
      : { task, language: extra.language ?? null, title: row.title, sourceUrl: row.sourceUrl ?? null, segments, chunkSize: c.summaryChunkSegments, chunks: chunkCount(segments.length, c.summaryChunkSegments) };
  await writeJson(file(d, ref, 'source.json'), snapshot);
  const units = snapshot.lines?.length ?? snapshot.segments?.length ?? 0;
  await em.nativeUpdate(TranscriptExtra, { jobId: ref.jobId }, { units, chunks: snapshot.chunks });
  await stage(d, ref, 5, 'preparing', `${units} ${task === 'translation' ? 'subtitle lines' : 'segments'} in ${snapshot.chunks} request${snapshot.chunks === 1 ? '' : 's'}`);
  return { chunks: snapshot.chunks, task };
}

/** Asks the model, heartbeating while it thinks; cancelling the job aborts the request. */
async function ask(d: ActivityDeps, q: Parameters<typeof chatJson>[1]): Promise<string> {
  const ep = llmEndpoint(d.config);
  const timeoutMs = d.config.transcriptExtras.requestTimeoutMs;
  return withProgress(async (p) => {
    const signal = AbortSignal.any([p.signal, AbortSignal.timeout(timeoutMs)]);
    const answer = await p.waiting(chatJson(ep, q, { signal, deadline: Date.now() + timeoutMs, setting: 'TRANSCRIPT_LLM_TIMEOUT_MS' }));
    return answer.content;
  });
}

async function chunk(d: ActivityDeps, input: Ref & { index: number }): Promise<{ kept: boolean }> {
  await owned(d, input);
  const s = (await readJson<Snapshot>(file(d, input, 'source.json')))!;
  const out = file(d, input, `chunk-${input.index}.json`);
  if (await readJson(out)) return { kept: true };
  const progress = 10 + Math.floor((80 * input.index) / s.chunks);
  if (s.task === 'translation') {
    const lines = s.lines!;
    const range = chunkRange(lines.length, s.chunkSize, input.index);
    const target = languageName(s.language!);
    await stage(d, input, progress, 'translating', `Translating lines ${range.from + 1}-${range.to} of ${lines.length} into ${target}`);
    const own = lines.slice(range.from, range.to);
    const content = await ask(d, translationAsk(lines, range, s.language!, d.config.transcriptExtras.translationContextLines));
    await writeJson(out, readTranslation(content, own, s.language!));
  } else {
    const segments = s.segments!;
    const range = chunkRange(segments.length, s.chunkSize, input.index);
    await stage(d, input, progress, 'summarising', s.chunks > 1 ? `Summarising part ${input.index + 1} of ${s.chunks}` : 'Summarising the transcript');
    const part = segments.slice(range.from, range.to);
    const content = await ask(d, partAsk(part, { index: input.index, count: s.chunks }, s.language ?? undefined));
    await writeJson(out, readPart(content, part));
  }
  return { kept: false };
}

type FinishOutcome = { result: 'done'; title: string } | { result: 'stopped' };

async function finish(d: ActivityDeps, ref: Ref): Promise<FinishOutcome> {
  await owned(d, ref);
  const s = (await readJson<Snapshot>(file(d, ref, 'source.json')))!;
  const answers: unknown[] = [];
  for (let i = 0; i < s.chunks; i++) answers.push(await readJson(file(d, ref, `chunk-${i}.json`)));
  const createdAt = new Date();
  let files: Record<string, string>;
  let result: unknown;
  if (s.task === 'translation') {
    const texts = (answers as string[][]).flat();
    const title = `${s.title} (${s.language})`;
    const t = renderTranslation(s.lines!, texts, { title, transcriptSource: 'translation', sourceUrl: s.sourceUrl, createdAt, language: s.language! }, subtitleRules(d.config.transcription));
    files = Object.fromEntries(TRANSCRIPT_FORMATS.map((f) => [`transcript.${f}`, t.files[f]]));
    result = t.segments;
  } else {
    const parts = answers as PartSummary[];
    let summary = parts[0]?.summary ?? '';
    if (parts.length > 1) {
      await stage(d, ref, 90, 'summarising', `Summarising the ${parts.length} parts together`);
      summary = readCombined(await ask(d, combineAsk(parts.map((p) => p.summary), s.language ?? undefined)));
    }
    const end = s.segments!.length ? Math.max(...s.segments!.map((x) => x.end)) : 0;
    const assembled = assembleSummary(summary, parts, end);
    const r = renderSummary(assembled, { title: s.title, language: s.language, createdAt });
    files = { 'summary.md': r.md, 'summary.json': r.json };
    result = assembled;
  }
  const finalDir = outputDir(d.config.dataDir, ref.jobId);
  const staging = `${finalDir}.${randomBytes(4).toString('hex')}.staging`;
  await fs.mkdir(staging, { recursive: true });
  try {
    for (const [name, text] of Object.entries(files)) await fs.writeFile(path.join(staging, name), text);
    const { changed } = await d.jobs.update(
      d.orm.em.fork(),
      ref.jobId,
      (job) => (owns(job, ref.runId) ? { status: TRANSCRIPTION_STATUSES.done, progress: 100, stage: 'done', stageDetail: null, error: null, completedAt: new Date() } : null),
      {
        within: async (tx) => {
          await tx.nativeUpdate(TranscriptExtra, { jobId: ref.jobId }, { resultJson: JSON.stringify(result), outputDir: finalDir });
          // Last: a failure here rolls everything back.
          await fs.rm(finalDir, { recursive: true, force: true });
          await fs.rename(staging, finalDir);
        },
      },
    );
    return changed ? { result: 'done', title: s.title } : { result: 'stopped' };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

async function cleanup(d: ActivityDeps, ref: Ref): Promise<void> {
  await fs.rm(runDir(d.config.dataDir, ref.jobId, ref.runId), { recursive: true, force: true });
}

/** The activities of translations and summaries, on the transcription queue. */
export function createTranscriptExtraActivities(d: ActivityDeps) {
  return {
    transcriptExtraPrepare: (ref: Ref) => prepare(d, ref),
    transcriptExtraChunk: (input: Ref & { index: number }) => chunk(d, input),
    transcriptExtraFinish: (ref: Ref) => finish(d, ref),
    transcriptExtraCleanup: (ref: Ref) => cleanup(d, ref),
    /** TRANSCRIPTION_SUMMARY: a finished job's summary, started as POST /api/jobs/:id/summary starts one. */
    transcriptExtraRequestSummary: async (input: { transcriptionJobId: string }): Promise<void> => {
      const extras = new TranscriptExtras({ config: d.config, log: d.log, em: () => d.orm.em.fork(), jobs: d.jobs, temporal: d.temporal });
      await extras.request(input.transcriptionJobId, 'summary', null);
    },
  };
}
export type TranscriptExtraActivities = ReturnType<typeof createTranscriptExtraActivities>;
