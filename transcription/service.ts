import { watchJob } from '../jobs/watch.js';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { type Config } from '../core/config.js';
import { type AsrBackendKind } from './configuration.js';
import { ConflictError, NotFoundError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { AudioMode } from './transcripts/audio.js';
import type { NumberedSegment } from './transcripts/segments.js';
import { FORMAT_CONTENT_TYPES, fileStem, TRANSCRIPT_FORMATS, type TranscriptFormat } from './transcripts/writers.js';
import { Job } from '../db/entities/job.js';
import { Transcription, TranscriptionWebhook } from './entities.js';
import type { EventHub } from '../jobs/hub.js';
import { launchJob, relaunchJob } from '../jobs/launch.js';
import { readTogether } from '../jobs/read-together.js';
import type { JobStore } from '../jobs/store.js';
import {
  ASR_WEBHOOK_SIGNAL,
  type SourceKind,
  TRANSCRIPTION_WORKFLOW,
  type TranscriptionInput,
  type WebhookNotice,
  workflowIdFor,
} from './contract.js';
import { TRANSCRIPTION_KIND, TRANSCRIPTION_STATUSES, type TranscriptionStatus } from './kind.js';
import { PLAYBACK_FILE, playbackDir, uploadDir } from './paths.js';
import { editTranscript } from './edits.js';
import { failJob, markDelivery, resultFileName } from './results.js';
import { correctSegment, renameSpeakers } from './transcripts/edits.js';
import { tokenMatches } from './tokens.js';
import { TranscriptExtras } from './derived/service.js';
import { backendJobId, classifyWebhook } from './webhook-payload.js';

export interface ServiceDeps {
  config: Config;
  log: Logger;
  em: () => EntityManager;
  jobs: JobStore;
  temporal: Client;
  hub: EventHub;
}

/** A job as the API shows it. */
export function jobView(job: Job, t: Transcription, segments?: NumberedSegment[]) {
  const done = job.status === TRANSCRIPTION_STATUSES.done;
  return {
    id: job.id,
    title: t.title,
    status: job.status as TranscriptionStatus,
    progress: job.progress,
    stage: job.stage ?? null,
    stageDetail: job.stageDetail ?? null,
    error: job.error ?? null,
    source: t.sourceKind as SourceKind,
    sourceUrl: t.sourceUrl ?? null,
    fileName: t.uploadFileName ?? null,
    mode: t.mode as AudioMode,
    appliedMode: t.appliedMode ?? null,
    modeReason: t.modeReason ?? null,
    asrJobId: t.asrJobId ?? null,
    transcript_source: (t.transcriptSource ?? null) as 'captions' | 'asr' | null,
    asrBackend: (t.asrBackend ?? null) as AsrBackendKind | null,
    asrModel: t.asrModel ?? null,
    outputDir: t.outputDir ?? null,
    segmentCount: t.segmentCount ?? null,
    files: done ? Object.fromEntries(TRANSCRIPT_FORMATS.map((f) => [f, `/api/jobs/${job.id}/files/${f}`])) : null,
    runs: t.runs,
    groupId: t.groupId ?? null,
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
    startedAt: job.startedAt?.toISOString() ?? null,
    completedAt: job.completedAt?.toISOString() ?? null,
    ...(segments && { segments }),
  };
}
export type JobView = ReturnType<typeof jobView>;

export interface NewTranscription {
  id?: string;
  sourceKind: SourceKind;
  sourceUrl?: string;
  title?: string;
  mode: AudioMode;
  upload?: { clientName: string; storedName: string; bytes: number };
  /** The playlist the job is an entry of (transcription/playlists.ts). */
  group?: { id: string; index: number };
}

export interface WebhookAnswer {
  status: 200 | 400 | 404 | 500;
  body: { ok: true } | { ok: false; error: string };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const notFound = (id: string) => new NotFoundError(`Job ${id} not found`, 'JOB_NOT_FOUND');

/**
 * What a job's workflow is started with: its source, mode, backend and the limits of the settings. Also what a
 * recipe's speech step starts its child transcription with (recipes/speech.ts).
 */
export function workflowInput(config: Config, job: Pick<Job, 'id'>, t: Pick<Transcription, 'sourceKind' | 'mode'>): TranscriptionInput {
  const c = config.transcription;
  return {
    jobId: job.id,
    sourceKind: t.sourceKind as SourceKind,
    mode: t.mode as AudioMode,
    backend: c.asrBackend,
    limits: {
      modelWaitMaxMs: c.modelWaitMaxMs,
      maxResubmits: c.maxResubmits,
      webhookTimeoutMs: c.webhookTimeoutMs,
      heartbeatTimeoutMs: c.heartbeatTimeoutMs,
      mediaTimeoutMs: c.mediaTimeoutMs,
    },
    ...(config.transcriptExtras.summaryForEveryJob && { summaryForEveryJob: true }),
  };
}

/**
 * A job and its row, written in one transaction (`within` adds to it, e.g. a playlist's check that it was not
 * cancelled), then its workflow started (jobs/launch.ts). Shared by the API and the playlist expansion.
 */
export async function createTranscriptionJob(
  d: Pick<ServiceDeps, 'config' | 'em' | 'jobs' | 'temporal'>,
  input: NewTranscription,
  within?: (tx: EntityManager) => Promise<void>,
): Promise<{ job: Job; row: Transcription }> {
  const id = input.id ?? randomUUID();
  const title = transcriptionTitle(input);
  let row: Transcription | undefined;
  const { job } = await launchJob(
    { em: d.em(), jobs: d.jobs, temporal: d.temporal, config: d.config },
    {
      id,
      kind: TRANSCRIPTION_KIND,
      status: TRANSCRIPTION_STATUSES.queued,
      stage: 'queued',
      workflowId: workflowIdFor(id),
      workflowType: TRANSCRIPTION_WORKFLOW,
      queue: 'transcription',
      args: (job) => [workflowInput(d.config, job, row!)],
      subject: input.sourceUrl ?? title.slice(0, 300),
      within: async (tx) => {
        await within?.(tx);
        row = createTranscriptionRow(tx, id, input);
        await tx.flush();
      },
    },
  );
  return { job, row: row! };
}

function transcriptionTitle(input: NewTranscription): string {
  return (
    input.title?.trim() ||
    (input.sourceKind === 'url'
      ? input.sourceUrl!
      : input.sourceKind === 'recording'
        ? `Recording ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`
        : path.parse(input.upload?.clientName ?? 'upload').name || 'Upload')
  );
}

/** A job's transcription row, in the job's transaction: the API's, the playlist expansion's, a recipe's speech step's. */
export function createTranscriptionRow(tx: EntityManager, jobId: string, input: NewTranscription): Transcription {
  return tx.create(Transcription, {
    jobId,
    title: transcriptionTitle(input).slice(0, 300),
    titleFromUser: Boolean(input.title?.trim()),
    sourceKind: input.sourceKind,
    sourceUrl: input.sourceUrl ?? null,
    uploadFileName: input.upload?.clientName ?? null,
    uploadStoredName: input.upload?.storedName ?? null,
    uploadBytes: input.upload?.bytes ?? null,
    mode: input.mode,
    runs: 1,
    modelWaits: 0,
    groupId: input.group?.id ?? null,
    groupIndex: input.group?.index ?? null,
  });
}

/** The transcription service behind the HTTP API: create, list, read, cancel, retry, and the webhook. */
export class TranscriptionService {
  /** Translations and summaries (transcription/derived/): listed in the job's JSON. */
  readonly extras: TranscriptExtras;

  constructor(private readonly d: ServiceDeps) {
    this.extras = new TranscriptExtras(d);
  }

  private workflowInput(job: Job, t: Transcription): TranscriptionInput {
    return workflowInput(this.d.config, job, t);
  }

  /** A job and its row, written in one transaction before its workflow starts (the first activity reads it). */
  async create(input: NewTranscription): Promise<JobView> {
    const { job, row } = await createTranscriptionJob(this.d, input);
    return jobView(job, row);
  }

  private async load(id: string): Promise<{ job: Job; row: Transcription }> {
    if (!UUID.test(id)) throw notFound(id);
    const { job, row } = await readTogether(this.d.em(), async (em) => {
      const job = await em.findOne(Job, { id, kind: TRANSCRIPTION_KIND });
      return { job, row: job && (await em.findOne(Transcription, { jobId: id })) };
    });
    if (!job || !row) throw notFound(id);
    return { job, row };
  }

  async get(id: string, withSegments = false): Promise<JobView> {
    const { job, row } = await this.load(id);
    const segments = withSegments ? (row.segmentsJson ? (JSON.parse(row.segmentsJson) as NumberedSegment[]) : []) : undefined;
    const extras = (await this.extras.forJobs([id])).get(id)!;
    return { ...jobView(job, row, segments), ...extras };
  }

  async job(id: string): Promise<Job> {
    return (await this.load(id)).job;
  }

  async list(q: { status?: TranscriptionStatus; group?: string; limit: number; offset: number }) {
    const { jobs, total, rows } = await readTogether(this.d.em(), async (em) => {
      // A playlist's jobs (?group=): their ids, from the rows that name the group.
      const inGroup = q.group ? (await em.find(Transcription, { groupId: q.group }, { fields: ['jobId'] })).map((r) => r.jobId) : undefined;
      const where = { kind: TRANSCRIPTION_KIND, ...(q.status && { status: q.status }), ...(inGroup && { id: { $in: inGroup } }) };
      const [jobs, total] = await em.findAndCount(Job, where, { orderBy: { createdAt: 'desc', id: 'asc' }, limit: q.limit, offset: q.offset });
      const rows = new Map((await em.find(Transcription, { jobId: { $in: jobs.map((j) => j.id) } })).map((r) => [r.jobId, r]));
      return { jobs, total, rows };
    });
    const extras = await this.extras.forJobs(jobs.map((j) => j.id));
    const items = jobs.filter((j) => rows.has(j.id)).map((j) => ({ ...jobView(j, rows.get(j.id)!), ...extras.get(j.id)! }));
    return { items, total, hasMore: q.offset + jobs.length < total, limit: q.limit, offset: q.offset };
  }

  /** A result file: where it is, its download name and type. 409 until the job is done. */
  async file(id: string, format: TranscriptFormat): Promise<{ path: string; fileName: string; contentType: string }> {
    const { job, row } = await this.load(id);
    if (job.status !== TRANSCRIPTION_STATUSES.done || !row.outputDir) {
      throw new ConflictError(`Job ${id} has no transcript yet (it is ${job.status})`, 'TRANSCRIPT_NOT_READY');
    }
    const file = path.join(row.outputDir, resultFileName(format));
    // A job finished before a format existed (VTT) gets its files written again from its stored segments, once.
    if (!(await fs.stat(file).catch(() => undefined)) && row.segmentsJson) await editTranscript(this.d, id, (segments) => segments);
    if (!(await fs.stat(file).catch(() => undefined))) throw new NotFoundError(`The ${format} file of job ${id} is missing`, 'FILE_NOT_FOUND');
    return { path: file, fileName: `${fileStem(row.title)}.${format}`, contentType: FORMAT_CONTENT_TYPES[format] };
  }

  /** The job's playback copy (transcription/playback.ts): where it is and its size. 404 when it has none. */
  async audio(id: string): Promise<{ path: string; size: number }> {
    await this.load(id);
    const file = path.join(playbackDir(this.d.config.dataDir, id), PLAYBACK_FILE);
    const st = await fs.stat(file).catch(() => undefined);
    if (!st?.isFile()) throw new NotFoundError(`Job ${id} has no audio to play (a transcript from captions has none)`, 'AUDIO_NOT_AVAILABLE');
    return { path: file, size: st.size };
  }

  /** Names speakers (transcription/transcripts/edits.ts, renameSpeakers); the files follow. Answers the job with its segments. */
  async nameSpeakers(id: string, names: Record<string, string>): Promise<JobView> {
    await this.load(id);
    await editTranscript(this.d, id, (segments) => renameSpeakers(segments, names));
    return this.get(id, true);
  }

  /** Corrects a segment's text (transcription/transcripts/edits.ts, correctSegment); the files follow. Answers the segment. */
  async correctSegment(id: string, segmentId: number, text: string): Promise<NumberedSegment> {
    await this.load(id);
    const segments = await editTranscript(this.d, id, (list) => correctSegment(list, segmentId, text));
    return segments.find((s) => s.id === segmentId)!;
  }

  /**
   * Cancels an active job at once: the job is `cancelled` (with its `done` event) before this returns, so a
   * webhook arriving now stores nothing; then its workflow is cancelled, which cancels the backend job. Already
   * cancelled: answered as it is. Done or failed: 409.
   */
  async cancel(id: string): Promise<JobView> {
    const { job, row } = await this.load(id);
    if (job.completedAt) {
      if (job.status === TRANSCRIPTION_STATUSES.cancelled) return jobView(job, row);
      throw new ConflictError(`Job ${id} is ${job.status}; only pending or processing jobs can be cancelled`, 'JOB_NOT_ACTIVE');
    }
    const handle = this.d.temporal.workflow.getHandle(job.workflowId);
    // The run being cancelled becomes the job's run, so it cannot revive the job when it starts late.
    const runId = await handle
      .describe()
      .then((d) => d.runId)
      .catch(() => undefined);
    const { job: updated, changed } = await this.d.jobs.update(this.d.em(), id, (j) =>
      j.completedAt ? null : { status: TRANSCRIPTION_STATUSES.cancelled, stage: 'cancelled', stageDetail: null, error: 'Cancelled', completedAt: new Date(), ...(runId && { runId }) },
    );
    if (!changed) return this.cancel(id);
    await handle.cancel().catch((err: Error) => {
      if (!(err instanceof WorkflowNotFoundError)) this.d.log.warn('could not cancel the workflow of a cancelled job', { jobId: id, error: err.message });
    });
    return jobView(updated, row);
  }

  /**
   * Runs a failed or cancelled job again, same id: URL jobs download again, upload jobs read their persisted file.
   * Done or pending (or processing): 409. A new run replaces whatever is left of the old one (jobs/launch.ts,
   * relaunchJob).
   */
  async retry(id: string): Promise<JobView> {
    const { job, row } = await this.load(id);
    const retryable: string[] = [TRANSCRIPTION_STATUSES.failed, TRANSCRIPTION_STATUSES.cancelled];
    const refuse = (status: string) => new ConflictError(`Job ${id} is ${status}; only failed or cancelled jobs can be retried`, 'JOB_NOT_RETRYABLE');
    if (!retryable.includes(job.status)) throw refuse(job.status);
    if (row.sourceKind !== 'url') {
      const file = path.join(uploadDir(this.d.config.dataDir, id), row.uploadStoredName ?? '');
      if (!row.uploadStoredName || !(await fs.stat(file).catch(() => undefined))?.isFile()) {
        throw new ConflictError(`The uploaded file of job ${id} is no longer there; upload it again as a new job`, 'UPLOAD_MISSING');
      }
    }
    const { job: revived, changed } = await relaunchJob({ em: this.d.em(), jobs: this.d.jobs, temporal: this.d.temporal, config: this.d.config }, id, {
      retryable: (j) => retryable.includes(j.status),
      stage: 'queued',
      within: async (tx) => {
        await tx.nativeUpdate(
          Transcription,
          { jobId: id },
          {
            runs: row.runs + 1,
            asrJobId: null,
            callbackTokenHash: null,
            submittedAt: null,
            modelWaits: 0,
            appliedMode: null,
            modeReason: null,
            transcriptSource: null,
            asrBackend: null,
            asrModel: null,
            segmentsJson: null,
            segmentCount: null,
            outputDir: null,
          },
        );
      },
      workflowType: TRANSCRIPTION_WORKFLOW,
      queue: 'transcription',
      args: (j) => [this.workflowInput(j, row)],
      subject: row.sourceUrl ?? row.title,
      memo: { run: row.runs + 1 },
    });
    if (!changed) throw refuse(revived.status);
    return jobView(revived, await this.d.em().findOneOrFail(Transcription, { jobId: id }));
  }

  /**
   * Who may send a webhook body, decided before any of it is read: undefined for an unknown job or a missing or
   * wrong token (refused at once, like an unknown job); `waiting` for a job waiting for its result, the only caller
   * that may send a large body (ASR_WEBHOOK_BODY_LIMIT); `ended` otherwise (its calls change nothing).
   */
  async admitWebhook(jobId: string, token: unknown): Promise<'waiting' | 'ended' | undefined> {
    const target = await this.webhookTarget(this.d.em(), jobId, token);
    return target && (target.job.completedAt ? 'ended' : 'waiting');
  }

  /** The job a webhook call is for, when its token is the current submission's. */
  private async webhookTarget(em: EntityManager, jobId: string, token: unknown): Promise<{ row: Transcription; job: Job } | undefined> {
    if (!UUID.test(jobId)) return undefined;
    const row = await em.findOne(Transcription, { jobId });
    if (!row || !tokenMatches(token, row.callbackTokenHash)) return undefined;
    const job = await em.findOne(Job, { id: jobId });
    return job ? { row, job } : undefined;
  }

  /**
   * A webhook call (docs/transcription.md, "The webhook"). Authenticated by the token of the job's current submission; a
   * missing or wrong token, or an unknown job, is 404 and changes nothing. Model-lifecycle and progress notices,
   * and calls for a job that already ended, are acknowledged and change nothing. Otherwise the payload is stored,
   * its id signalled to the workflow (durable even with no worker up), and the answer waits for the outcome:
   * 200 handled; 500 when handling it failed (the job is then failed); 200 after TRANSCRIPTION_WEBHOOK_RESPONSE_MS
   * when no worker has handled it yet (it will be).
   */
  async webhook(jobId: string, token: unknown, body: unknown): Promise<WebhookAnswer> {
    const ok: WebhookAnswer = { status: 200, body: { ok: true } };
    const em = this.d.em();
    const target = await this.webhookTarget(em, jobId, token);
    if (!target) return { status: 404, body: { ok: false, error: 'Job not found' } };
    const { row, job } = target;
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      return { status: 400, body: { ok: false, error: 'The webhook body must be a JSON object (the backend job)' } };
    }
    const payload = body as Record<string, unknown>;
    const meaning = classifyWebhook(payload);
    const asrJobId = backendJobId(payload);
    if (!meaning || meaning.kind === 'model-lifecycle' || meaning.kind === 'progress') {
      // Not the end of a backend job: acknowledged, never acted on (a model warm-up must not finish a job).
      this.d.log[meaning ? 'debug' : 'warn']('webhook call ignored', { jobId, kind: meaning?.kind ?? 'no job status' });
      return ok;
    }
    // Locally cancelled, or already finished: nothing is stored, and a replay changes nothing.
    if (job.completedAt) return ok;
    // For another submission of this job (an earlier attempt's job at the backend): stale.
    if (asrJobId && row.asrJobId && asrJobId !== row.asrJobId) return ok;

    const delivery = em.create(TranscriptionWebhook, {
      id: randomUUID(),
      jobId,
      asrJobId,
      backendStatus: typeof payload.status === 'string' ? payload.status.slice(0, 255) : '(none)',
      payload,
      outcome: 'pending',
      receivedAt: new Date(),
    });
    await em.flush();
    try {
      const notice: WebhookNotice = { deliveryId: delivery.id, asrJobId };
      await this.d.temporal.workflow.getHandle(job.workflowId).signal(ASR_WEBHOOK_SIGNAL, notice);
    } catch (err) {
      const current = await this.d.em().findOne(Job, { id: jobId });
      if (err instanceof WorkflowNotFoundError && current?.completedAt) {
        await markDelivery(this.d.em(), delivery.id, 'ignored', 'the job already ended');
        return ok;
      }
      const error = `Could not hand the result to the job's workflow: ${(err as Error).message}`;
      await failJob({ config: this.d.config, jobs: this.d.jobs, em: this.d.em }, { jobId, error, deliveryId: delivery.id });
      await this.d.temporal.workflow.getHandle(job.workflowId).cancel().catch(() => undefined);
      return { status: 500, body: { ok: false, error } };
    }
    const outcome = await this.outcome(delivery.id, jobId, this.d.config.transcription.webhookResponseMs);
    if (outcome?.outcome === 'error') return { status: 500, body: { ok: false, error: outcome.detail ?? 'Processing failed' } };
    return ok;
  }

  /** Waits for the workflow to decide about a webhook call: woken by the job's events, polling as a fallback. */
  private async outcome(deliveryId: string, jobId: string, timeoutMs: number): Promise<TranscriptionWebhook | undefined> {
    return watchJob<TranscriptionWebhook | undefined>(
      this.d.hub,
      jobId,
      async () => {
        const em = this.d.em();
        const delivery = await em.findOne(TranscriptionWebhook, { id: deliveryId });
        if (!delivery || delivery.outcome !== 'pending') return { done: true, value: delivery ?? undefined };
        const job = await em.findOne(Job, { id: jobId });
        // Ended by something else (a cancel, another call): this call changes nothing.
        if (!job || job.completedAt) {
          const again = await this.d.em().findOne(TranscriptionWebhook, { id: deliveryId });
          return { done: true, value: again && again.outcome !== 'pending' ? again : undefined };
        }
        return { done: false, value: undefined };
      },
      { timeoutMs, pollMs: 200 },
    );
  }

}
