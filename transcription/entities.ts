import { defineEntity, type InferEntity } from '@mikro-orm/core';

/**
 * What a transcription job has beyond the generic `job` row (status, progress, error, timestamps live there): its
 * source, options, the backend's job id, and the result. One row per job, keyed by the job id.
 */
export const Transcription = defineEntity({
  name: 'Transcription',
  tableName: 'transcription',
  properties: (p) => ({
    jobId: p.string().primary(),
    title: p.text(),
    /** False while the title is a placeholder (the URL, the file name) that the video's own title may replace. */
    titleFromUser: p.boolean().default(false),
    /** `url`, `upload` or `recording`. */
    sourceKind: p.string(),
    sourceUrl: p.text().nullable(),
    /** The file name the client sent, and the name it is stored under in DATA_DIR/uploads/<jobId>/. */
    uploadFileName: p.text().nullable(),
    uploadStoredName: p.string().nullable(),
    uploadBytes: p.bigint('number').nullable(),
    /** The processing mode asked for (`none`, `standard`, `aggressive`, `auto`) and the one applied. */
    mode: p.string(),
    appliedMode: p.string().nullable(),
    modeReason: p.text().nullable(),
    /** The backend's id of the current submission. */
    asrJobId: p.string().nullable(),
    /** sha256 (hex) of the current submission's webhook token; the token itself is never stored. */
    callbackTokenHash: p.string().nullable(),
    submittedAt: p.datetime().nullable(),
    /** How many submissions the backend answered 503 (model loading) in the current run. */
    modelWaits: p.integer().default(0),
    /** `captions` or `asr`, once finished. */
    transcriptSource: p.string().nullable(),
    /** For `asr` transcripts: the backend kind (ASR_BACKEND) and the model (ASR_MODEL) that produced it. */
    asrBackend: p.string().nullable(),
    asrModel: p.string().nullable(),
    segmentsJson: p.text().nullable(),
    segmentCount: p.integer().nullable(),
    outputDir: p.text().nullable(),
    /** How many times the job was run (1 + retries). */
    runs: p.integer().default(1),
    /** The playlist (`transcription_group`) this job is an entry of, and its place in it (0-based). */
    groupId: p.string().nullable(),
    groupIndex: p.integer().nullable(),
  }),
  indexes: [
    { name: 'transcription_asr_job_id_index', properties: ['asrJobId'] },
    { name: 'transcription_group_id_index', properties: ['groupId'] },
  ],
});
export type Transcription = InferEntity<typeof Transcription>;

/**
 * Every authenticated webhook call that reached a running job, with what became of it. The HTTP handler stores
 * the payload and signals the workflow with the row's id (the payload can be megabytes; signals carry the id),
 * then waits for `outcome` to answer the backend truthfully.
 */
export const TranscriptionWebhook = defineEntity({
  name: 'TranscriptionWebhook',
  tableName: 'transcription_webhook',
  properties: (p) => ({
    id: p.string().primary(),
    jobId: p.string(),
    asrJobId: p.string().nullable(),
    backendStatus: p.string(),
    /** Dropped once handled: the result then lives in the transcription row and files. */
    payload: p.json<Record<string, unknown>>().nullable(),
    /** `pending`, then `applied`, `ignored` (stale, replayed, cancelled) or `error` (processing failed). */
    outcome: p.string().default('pending'),
    detail: p.text().nullable(),
    receivedAt: p.datetime(),
    handledAt: p.datetime().nullable(),
  }),
  indexes: [{ name: 'transcription_webhook_job_id_index', properties: ['jobId'] }],
});
export type TranscriptionWebhook = InferEntity<typeof TranscriptionWebhook>;

/** An entry of a playlist left out, and why (docs/transcription.md, "Playlists"). */
export interface SkippedEntry {
  index: number;
  url: string | null;
  title: string | null;
  /** `UNAVAILABLE` (private, removed, members only), `MEDIA_TOO_LONG`, `DUPLICATE`, `NO_URL`, `NESTED_PLAYLIST`, `OVER_MAX_ENTRIES`. */
  code: string;
  reason: string;
}

/**
 * A playlist or channel URL turned into one transcription job per entry (transcription/playlists.ts). The jobs
 * carry its id (`transcription.group_id`); the expansion itself is a workflow (`transcription-playlist:<id>`).
 */
export const TranscriptionGroup = defineEntity({
  name: 'TranscriptionGroup',
  tableName: 'transcription_group',
  properties: (p) => ({
    id: p.string().primary(),
    sourceUrl: p.text(),
    /** The playlist's own title once listed (the URL until then). */
    title: p.text(),
    mode: p.string(),
    /** `expanding`, then `expanded`, `failed` (`error` says why, with a stable code) or `cancelled`. */
    status: p.string(),
    error: p.text().nullable(),
    /** Entries the listing gave (all of them, when it says), and the jobs made of them. */
    entryCount: p.integer().nullable(),
    jobCount: p.integer().default(0),
    skipped: p.json<SkippedEntry[]>().default('[]' as never),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    cancelledAt: p.datetime().nullable(),
  }),
  indexes: [{ name: 'transcription_group_source_url_index', properties: ['sourceUrl'] }],
});
export type TranscriptionGroup = InferEntity<typeof TranscriptionGroup>;
