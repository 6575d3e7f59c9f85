import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { Config } from '../../core/config.js';
import { ConflictError, NotFoundError, ValidationError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { Job } from '../../db/entities/job.js';
import { launchJob, relaunchJob } from '../../jobs/launch.js';
import { readTogether } from '../../jobs/read-together.js';
import type { JobStore } from '../../jobs/store.js';
import { Transcription } from '../entities.js';
import { TRANSCRIPTION_STATUSES } from '../kind.js';
import { FORMAT_CONTENT_TYPES, fileStem, TRANSCRIPT_FORMATS, type TranscriptFormat } from '../transcripts/writers.js';
import { EXTRA_KIND, EXTRA_WORKFLOW, type ExtraInput, type ExtraTask, extraWorkflowId } from './contract.js';
import { TranscriptExtra } from './entities.js';
import { canonicalLanguage } from '../../core/languages.js';
import type { Summary } from './summary.js';

export interface ExtrasDeps {
  config: Config;
  log: Logger;
  em: () => EntityManager;
  jobs: JobStore;
  temporal: Client;
}

export const SUMMARY_FORMATS = ['md', 'json'] as const;
export type SummaryFormat = (typeof SUMMARY_FORMATS)[number];

/** A translation or summary as the API shows it, in its transcription job's JSON and on its own. */
export function extraView(job: Job, x: TranscriptExtra) {
  const done = job.status === TRANSCRIPTION_STATUSES.done;
  const base = `/api/jobs/${x.transcriptionJobId}`;
  const files =
    x.task === 'translation'
      ? Object.fromEntries(TRANSCRIPT_FORMATS.map((f) => [f, `${base}/files/${f}?language=${encodeURIComponent(x.language ?? '')}`]))
      : Object.fromEntries(SUMMARY_FORMATS.map((f) => [f, `${base}/summary/${f}${x.language ? `?language=${encodeURIComponent(x.language)}` : ''}`]));
  return {
    id: job.id,
    task: x.task as ExtraTask,
    language: x.language ?? null,
    status: job.status,
    progress: job.progress,
    stage: job.stage ?? null,
    stageDetail: job.stageDetail ?? null,
    error: job.error ?? null,
    files: done ? files : null,
    runs: x.runs,
    createdAt: job.createdAt.toISOString(),
    completedAt: job.completedAt?.toISOString() ?? null,
    ...(x.task === 'summary' && done && x.resultJson && { summary: JSON.parse(x.resultJson) as Summary }),
  };
}
export type ExtraView = ReturnType<typeof extraView>;

/** A language tag from a request: canonical, or 400 UNKNOWN_LANGUAGE. */
export function requestedLanguage(raw: string, pointer = '/body/language'): string {
  const tag = canonicalLanguage(raw);
  if (!tag) {
    throw new ValidationError(`"${raw.slice(0, 40)}" is not a language: use a BCP 47 tag such as de, fr, pt-BR or zh-Hant`, 'UNKNOWN_LANGUAGE', [
      { pointer, message: 'must be a BCP 47 language tag of a known language' },
    ]);
  }
  return tag;
}

const RETRYABLE: string[] = [TRANSCRIPTION_STATUSES.failed, TRANSCRIPTION_STATUSES.cancelled];

/** Translations and summaries of transcription jobs: asked for, listed, cancelled, downloaded. */
export class TranscriptExtras {
  constructor(private readonly d: ExtrasDeps) {}

  private input(job: Job, x: Pick<TranscriptExtra, 'transcriptionJobId' | 'task' | 'language'>): ExtraInput {
    const c = this.d.config;
    return {
      jobId: job.id,
      transcriptionJobId: x.transcriptionJobId,
      task: x.task as ExtraTask,
      language: x.language ?? null,
      limits: { attempts: c.transcriptExtras.attempts, requestTimeoutMs: c.transcriptExtras.requestTimeoutMs, heartbeatTimeoutMs: c.transcription.heartbeatTimeoutMs },
    };
  }

  private async find(em: EntityManager, transcriptionJobId: string, task: ExtraTask, language: string | null) {
    const { x, job } = await readTogether(em, async (tx) => {
      const x = await tx.findOne(TranscriptExtra, { transcriptionJobId, task, language });
      return { x, job: x && (await tx.findOne(Job, { id: x.jobId })) };
    });
    return x && job ? { x, job } : undefined;
  }

  /**
   * A translation (or summary) of a done transcript: started (`started: true`), or the one there is, as it is (done
   * or running), or run again when it failed or was cancelled. 409 TRANSCRIPT_NOT_READY before the job is done.
   */
  async request(transcriptionJobId: string, task: ExtraTask, language: string | null): Promise<{ view: ExtraView; started: boolean }> {
    const em = this.d.em();
    const parent = await em.findOne(Job, { id: transcriptionJobId, kind: 'transcription' });
    const row = parent && (await em.findOne(Transcription, { jobId: transcriptionJobId }));
    if (!parent || !row) throw new NotFoundError(`Job ${transcriptionJobId} not found`, 'JOB_NOT_FOUND');
    if (parent.status !== TRANSCRIPTION_STATUSES.done) {
      throw new ConflictError(`Job ${transcriptionJobId} has no transcript yet (it is ${parent.status})`, 'TRANSCRIPT_NOT_READY');
    }
    const existing = await this.find(em, transcriptionJobId, task, language);
    if (existing && !RETRYABLE.includes(existing.job.status)) return { view: extraView(existing.job, existing.x), started: false };
    if (existing) return { view: await this.retry(existing.job, existing.x), started: true };
    const id = randomUUID();
    const values = { jobId: id, transcriptionJobId, task, language, runs: 1 };
    const { job, created } = await launchJob(
      { em: this.d.em(), jobs: this.d.jobs, temporal: this.d.temporal, config: this.d.config },
      {
        id,
        kind: EXTRA_KIND,
        status: TRANSCRIPTION_STATUSES.queued,
        stage: 'queued',
        workflowId: extraWorkflowId(transcriptionJobId, task, language),
        activeKey: extraWorkflowId(transcriptionJobId, task, language),
        topics: ['kind:transcription'],
        detail: { transcriptionJobId, task, language },
        workflowType: EXTRA_WORKFLOW,
        queue: 'transcription',
        args: (j) => [this.input(j, values)],
        subject: `${row.title} (${task}${language ? ` ${language}` : ''})`.slice(0, 300),
        within: async (tx) => {
          tx.create(TranscriptExtra, values);
          await tx.flush();
        },
      },
    );
    const x = await this.d.em().findOneOrFail(TranscriptExtra, { jobId: job.id });
    return { view: extraView(job, x), started: created };
  }

  private async retry(job: Job, x: TranscriptExtra): Promise<ExtraView> {
    const { job: revived } = await relaunchJob({ em: this.d.em(), jobs: this.d.jobs, temporal: this.d.temporal, config: this.d.config }, job.id, {
      retryable: (j) => RETRYABLE.includes(j.status),
      stage: 'queued',
      within: async (tx) => {
        await tx.nativeUpdate(TranscriptExtra, { jobId: job.id }, { runs: x.runs + 1, resultJson: null, outputDir: null, units: null, chunks: null });
      },
      workflowType: EXTRA_WORKFLOW,
      queue: 'transcription',
      args: (j) => [this.input(j, x)],
      subject: `${x.transcriptionJobId} (${x.task}${x.language ? ` ${x.language}` : ''})`,
      memo: { run: x.runs + 1 },
    });
    return extraView(revived, await this.d.em().findOneOrFail(TranscriptExtra, { jobId: job.id }));
  }

  /** The translations and summary of each job, for their JSON. */
  async forJobs(ids: string[]): Promise<Map<string, { translations: ExtraView[]; summary: ExtraView | null }>> {
    const em = this.d.em();
    const out = new Map(ids.map((id) => [id, { translations: [] as ExtraView[], summary: null as ExtraView | null }]));
    if (!ids.length) return out;
    const { read, jobs } = await readTogether(em, async (tx) => {
      const read = await tx.find(TranscriptExtra, { transcriptionJobId: { $in: ids } }, { orderBy: { language: 'asc' } });
      return { read, jobs: new Map((await tx.find(Job, { id: { $in: read.map((x) => x.jobId) } })).map((j) => [j.id, j])) };
    });
    for (const x of read) {
      const job = jobs.get(x.jobId);
      const entry = out.get(x.transcriptionJobId);
      if (!job || !entry) continue;
      if (x.task === 'translation') entry.translations.push(extraView(job, x));
      // The summary in the transcript's own language is the job's; one asked in another language is listed too.
      else if (!entry.summary || x.language === null) entry.summary = extraView(job, x);
    }
    return out;
  }

  private async existing(transcriptionJobId: string, task: ExtraTask, language: string | null) {
    const found = await this.find(this.d.em(), transcriptionJobId, task, language);
    if (!found) {
      const what = task === 'translation' ? `no translation into ${language}` : 'no summary';
      throw new NotFoundError(`Job ${transcriptionJobId} has ${what}`, task === 'translation' ? 'TRANSLATION_NOT_FOUND' : 'SUMMARY_NOT_FOUND');
    }
    return found;
  }

  /** Cancels a running translation or summary; one that has ended is answered as it is when cancelled, else 409. */
  async cancel(transcriptionJobId: string, task: ExtraTask, language: string | null): Promise<ExtraView> {
    const { job, x } = await this.existing(transcriptionJobId, task, language);
    if (job.completedAt) {
      if (job.status === TRANSCRIPTION_STATUSES.cancelled) return extraView(job, x);
      throw new ConflictError(`The ${task} is ${job.status}; only pending or processing ones can be cancelled`, 'JOB_NOT_ACTIVE');
    }
    const handle = this.d.temporal.workflow.getHandle(job.workflowId);
    const runId = await handle
      .describe()
      .then((r) => r.runId)
      .catch(() => undefined);
    const { job: updated, changed } = await this.d.jobs.update(this.d.em(), job.id, (j) =>
      j.completedAt ? null : { status: TRANSCRIPTION_STATUSES.cancelled, stage: 'cancelled', stageDetail: null, error: 'Cancelled', completedAt: new Date(), ...(runId && { runId }) },
    );
    if (!changed) return this.cancel(transcriptionJobId, task, language);
    await handle.cancel().catch((err: Error) => {
      if (!(err instanceof WorkflowNotFoundError)) this.d.log.warn('could not cancel the workflow of a cancelled translation or summary', { jobId: job.id, error: err.message });
    });
    return extraView(updated, x);
  }

  /** A translation's file (the transcript's formats) or the summary's (md, json). 409 until it is done. */
  async file(transcriptionJobId: string, task: ExtraTask, language: string | null, format: TranscriptFormat | SummaryFormat) {
    const { job, x } = await this.existing(transcriptionJobId, task, language);
    if (job.status !== TRANSCRIPTION_STATUSES.done || !x.outputDir) {
      throw new ConflictError(`The ${task} is not ready (it is ${job.status})`, task === 'translation' ? 'TRANSLATION_NOT_READY' : 'SUMMARY_NOT_READY');
    }
    const row = await this.d.em().findOne(Transcription, { jobId: transcriptionJobId });
    const stem = fileStem(row?.title ?? 'transcript');
    if (task === 'translation') {
      const f = format as TranscriptFormat;
      return { path: path.join(x.outputDir, `transcript.${f}`), fileName: `${stem}.${language}.${f}`, contentType: FORMAT_CONTENT_TYPES[f] };
    }
    const f = format as SummaryFormat;
    return { path: path.join(x.outputDir, `summary.${f}`), fileName: `${stem}.summary.${f}`, contentType: FORMAT_CONTENT_TYPES[f] };
  }
}
