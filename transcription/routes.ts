import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import type { Context } from 'koa';
import { NotFoundError, UnsupportedMediaTypeError, ValidationError } from '../core/errors.js';
import type { AudioMode } from './transcripts/audio.js';
import { TRANSCRIPT_FORMATS, type TranscriptFormat } from './transcripts/writers.js';
import { lastSeq } from '../jobs/events.js';
import { apiSchemas } from '../schemas/index.js';
import { transcriptionSchemas } from './schemas.js';
import { currentStateEvents } from './kind.js';
import { PLAYBACK_CONTENT_TYPE, uploadDir } from './paths.js';
import { TranscriptionService } from './service.js';
import { byteRange } from './byte-range.js';
import { receiveUpload } from './upload.js';
import { requestedLanguage } from './derived/service.js';
import type { RouteFactory } from '../api/deps.js';
import type { ErrorFormatter } from '../api/errors.js';
import { lastEventId, streamEvents } from '../api/sse.js';
import { rejectUnsafeInput, validate } from '../api/validate.js';

const TAGS = ['transcription'];
const jobResponse = { description: 'The job', schema: transcriptionSchemas.transcriptionJob };
const notFound = { description: 'No such job', schema: apiSchemas.error };
const webhookError: ErrorFormatter = (e) => ({ ok: false, error: e.message });
const webhookToken = (ctx: Context) => (Array.isArray(ctx.query.token) ? ctx.query.token[0] : ctx.query.token);

/**
 * Transcription jobs under /api/jobs, and the backend's webhook. See docs/transcription.md for the flow
 * and the events.
 */
export const transcriptionRoutes: RouteFactory = (deps) => {
  const { config, orm, hub } = deps;
  const service = new TranscriptionService({
    config,
    log: deps.log.child('transcription'),
    em: () => orm.em.fork(),
    jobs: deps.jobs,
    temporal: deps.temporal,
    hub,
  });

  return [
    {
      method: 'POST',
      path: '/api/jobs',
      summary: 'Create a transcription job from a video-site URL, an uploaded file or a browser recording',
      description:
        'JSON `{url, title?, mode?}` transcribes a video page (captions when it has them, else its audio). ' +
        'multipart/form-data with a `file` (and `title`, `mode`, `source`: `upload` or `recording`) transcribes ' +
        'the file, stored in DATA_DIR/uploads/<jobId>/ until the job succeeds. Answers 201 with the job (pending); ' +
        'its progress streams at /api/jobs/:id/events.',
      tags: TAGS,
      requestBodies: [
        { contentType: 'application/json', schema: transcriptionSchemas.transcriptionCreate },
        { contentType: 'multipart/form-data', schema: transcriptionSchemas.transcriptionUpload },
      ],
      responses: {
        201: jobResponse,
        400: { description: 'Invalid request', schema: apiSchemas.error },
        413: { description: 'The upload is larger than UPLOAD_MAX_BYTES (nothing is kept)', schema: apiSchemas.error },
        415: { description: 'Neither JSON nor multipart, or a file that is not audio or video', schema: apiSchemas.error },
      },
      handler: async (ctx: Context) => {
        let view;
        if (ctx.request.is('multipart/form-data')) {
          const id = randomUUID();
          const dir = uploadDir(config.dataDir, id);
          const upload = await receiveUpload(ctx, dir, config.transcription.uploadMaxBytes);
          try {
            rejectUnsafeInput('body', { ...upload.fields, file: upload.file.clientName });
            // A form's empty fields (a title left blank) mean "not given".
            const given = Object.fromEntries(Object.entries(upload.fields).filter(([, v]) => v.trim() !== ''));
            const fields = validate<{ title?: string; mode: AudioMode; source: 'upload' | 'recording' }>('body', transcriptionSchemas.transcriptionUpload, {
              ...given,
              file: upload.file.clientName,
            });
            view = await service.create({
              id,
              sourceKind: fields.source,
              mode: fields.mode,
              ...(fields.title && { title: fields.title }),
              upload: upload.file,
            });
          } catch (err) {
            await fs.rm(dir, { recursive: true, force: true });
            throw err;
          }
        } else if (ctx.request.is('application/json')) {
          const body = validate<{ url: string; title?: string; mode: AudioMode }>(
            'body',
            transcriptionSchemas.transcriptionCreate,
            (ctx.request as { body?: unknown }).body ?? {},
          );
          view = await service.create({ sourceKind: 'url', sourceUrl: body.url, mode: body.mode, ...(body.title && { title: body.title }) });
        } else {
          throw new UnsupportedMediaTypeError('Send JSON {url} or a multipart/form-data upload with a "file" field');
        }
        ctx.status = 201;
        ctx.set('Location', `/api/jobs/${view.id}`);
        ctx.body = view;
      },
    },
    {
      method: 'GET',
      path: '/api/jobs',
      summary: 'List transcription jobs, newest first',
      tags: TAGS,
      query: transcriptionSchemas.transcriptionListQuery,
      responses: { 200: { description: 'A page of jobs', schema: transcriptionSchemas.transcriptionJobList } },
      handler: async (ctx: Context) => {
        const q = ctx.state.query as { status?: never; group?: string; limit: number; offset: number };
        ctx.body = await service.list(q);
      },
    },
    {
      method: 'GET',
      path: '/api/jobs/events',
      summary: 'Events of every transcription job (server-sent events)',
      description:
        'The `status`, `error` and `done` events of all jobs, each with its `jobId`, as they happen. Resumes with ' +
        'Last-Event-ID. `: ping` comments keep the connection open.',
      tags: TAGS,
      responses: { 200: { description: 'An event stream', contentType: 'text/event-stream' } },
      handler: async (ctx: Context) => {
        await streamEvents(ctx, {
          hub,
          em: () => orm.em.fork(),
          stream: 'kind:transcription',
          heartbeatMs: config.sseHeartbeatMs,
        });
      },
    },
    {
      method: 'GET',
      path: '/api/jobs/:id',
      summary: 'A transcription job, with its segments',
      tags: TAGS,
      responses: { 200: jobResponse, 404: notFound },
      handler: async (ctx: Context) => {
        ctx.body = await service.get(ctx.params.id!, true);
      },
    },
    {
      method: 'GET',
      path: '/api/jobs/:id/events',
      summary: "A job's progress (server-sent events)",
      description:
        'First the current state (`status`; for a finished job also `error` and `done`), then each change: ' +
        '`status` {status, progress, stage, ...}, `error` {message} when it fails, and `done` {status} when it ' +
        'ends (done, failed or cancelled), after which the stream closes. Resumes with Last-Event-ID; a client ' +
        'that has already seen the end gets 204 (which stops EventSource from reconnecting).',
      tags: TAGS,
      responses: { 200: { description: 'An event stream', contentType: 'text/event-stream' }, 204: { description: 'The job has ended and the client has every event' }, 404: notFound },
      handler: async (ctx: Context) => {
        const job = await service.job(ctx.params.id!);
        const stream = `job:${job.id}`;
        const from = lastEventId(ctx);
        if (from !== undefined && job.completedAt && from >= (await lastSeq(orm.em.fork(), stream))) {
          ctx.status = 204;
          return;
        }
        let finished = false;
        await streamEvents(ctx, {
          hub,
          em: () => orm.em.fork(),
          stream,
          heartbeatMs: config.sseHeartbeatMs,
          initial: async () => {
            const now = await service.job(job.id);
            if (from !== undefined) return []; // the replay brings the client up to date
            finished = now.completedAt != null;
            return currentStateEvents(now);
          },
          endAtOnce: () => finished,
          endAfter: (e) => e.event === 'done',
        });
      },
    },
    {
      method: 'GET',
      path: '/api/jobs/:id/files/:format',
      summary: 'Download a result file: srt, vtt, txt, md or json',
      description:
        'An attachment named after the title. 409 TRANSCRIPT_NOT_READY until the job is done. `?language=de`: the ' +
        'translation into that language (404 TRANSLATION_NOT_FOUND, 409 TRANSLATION_NOT_READY until it is done).',
      tags: TAGS,
      responses: {
        200: { description: 'The file', contentType: 'application/octet-stream' },
        400: { description: 'Not a format', schema: apiSchemas.error },
        404: notFound,
        409: { description: 'The job is not done', schema: apiSchemas.error },
      },
      handler: async (ctx: Context) => {
        const format = ctx.params.format as TranscriptFormat;
        if (!TRANSCRIPT_FORMATS.includes(format)) {
          throw new ValidationError(`Unknown format "${format}": use ${TRANSCRIPT_FORMATS.join(', ')}`, 'VALIDATION_ERROR', [
            { pointer: '/path/format', message: `must be one of ${TRANSCRIPT_FORMATS.join(', ')}` },
          ]);
        }
        // `?language=de`: the translation's file (transcription/derived/).
        const language = typeof ctx.query.language === 'string' && ctx.query.language ? requestedLanguage(ctx.query.language, '/query/language') : undefined;
        const file = language ? await service.extras.file(ctx.params.id!, 'translation', language, format) : await service.file(ctx.params.id!, format);
        ctx.attachment(file.fileName);
        ctx.type = file.contentType;
        ctx.length = (await fs.stat(file.path)).size;
        ctx.body = createReadStream(file.path);
      },
    },
    {
      method: 'GET',
      path: '/api/jobs/:id/audio',
      summary: "The job's audio, to play a segment from",
      description:
        'A compressed copy of the audio the job transcribed (Opus in WebM, 24 kbit/s, made with the conversion), for ' +
        'the web page to play from a segment. Honours `Range` (206, `Content-Range`; 416 out of range), as audio ' +
        'elements seek with it. 404 AUDIO_NOT_AVAILABLE when the job has none (a transcript from captions, a job ' +
        'converted before this existed).',
      tags: TAGS,
      responses: {
        200: { description: 'The audio', contentType: PLAYBACK_CONTENT_TYPE },
        206: { description: 'The range asked for', contentType: PLAYBACK_CONTENT_TYPE },
        404: notFound,
        416: { description: 'The range is outside the file' },
      },
      handler: async (ctx: Context) => {
        const file = await service.audio(ctx.params.id!);
        const range = byteRange(ctx.get('Range') || undefined, file.size);
        ctx.set('Accept-Ranges', 'bytes');
        ctx.set('Cache-Control', 'private, no-cache');
        if (range === 'unsatisfiable') {
          ctx.status = 416;
          ctx.set('Content-Range', `bytes */${file.size}`);
          return;
        }
        ctx.type = PLAYBACK_CONTENT_TYPE;
        if (range) {
          ctx.status = 206;
          ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${file.size}`);
        }
        ctx.length = range ? range.end - range.start + 1 : file.size;
        ctx.body = createReadStream(file.path, range ?? {});
      },
    },
    {
      method: 'PATCH',
      path: '/api/jobs/:id/speakers',
      summary: "Name a transcript's speakers",
      description:
        '`{"SPEAKER_00": "Ana", "SPEAKER_01": "Ben"}`: every segment of each speaker takes the name, and the result ' +
        'files are written again (SRT and TXT `Ana: ...`, VTT `<v Ana>`, MD, JSON). Keys are the speakers as the job ' +
        'shows them (a name given before can be renamed); two keys may get one name. Answers the job with its ' +
        'segments. 400 UNKNOWN_SPEAKER when a key is not a speaker of the transcript (nothing changes); 409 ' +
        'TRANSCRIPT_NOT_READY until the job is done.',
      tags: TAGS,
      body: transcriptionSchemas.transcriptionSpeakers,
      responses: {
        200: jobResponse,
        400: { description: 'Invalid body, or a key that is not a speaker (UNKNOWN_SPEAKER)', schema: apiSchemas.error },
        404: notFound,
        409: { description: 'The job is not done', schema: apiSchemas.error },
      },
      handler: async (ctx: Context) => {
        ctx.body = await service.nameSpeakers(ctx.params.id!, (ctx.request as { body?: unknown }).body as Record<string, string>);
      },
    },
    {
      method: 'PATCH',
      path: '/api/jobs/:id/segments/:segmentId',
      summary: "Correct a segment's text",
      description:
        '`{"text": "..."}` replaces the text of segment `segmentId` (its `id` in the job\'s segments). Its timing and ' +
        'speaker stay; the edit is recorded on the segment (`edit.originalText`: what the backend said; ' +
        '`edit.editedAt`); its word times are dropped (they no longer match); the result files are written again. ' +
        'Answers the segment. 400 for an empty, over-long (5000 characters) or NUL-carrying text; 404 ' +
        'SEGMENT_NOT_FOUND; 409 TRANSCRIPT_NOT_READY until the job is done.',
      tags: TAGS,
      body: transcriptionSchemas.transcriptionSegmentEdit,
      responses: {
        200: { description: 'The corrected segment' },
        400: { description: 'Invalid body', schema: apiSchemas.error },
        404: notFound,
        409: { description: 'The job is not done', schema: apiSchemas.error },
      },
      handler: async (ctx: Context) => {
        const segmentId = Number(ctx.params.segmentId);
        if (!/^[1-9]\d{0,8}$/.test(ctx.params.segmentId!)) throw new NotFoundError(`The transcript has no segment ${ctx.params.segmentId}`, 'SEGMENT_NOT_FOUND');
        const body = (ctx.request as { body?: unknown }).body as { text: string };
        ctx.body = await service.correctSegment(ctx.params.id!, segmentId, body.text);
      },
    },
    {
      method: 'DELETE',
      path: '/api/jobs/:id',
      summary: 'Cancel an active job',
      description:
        'The job is `cancelled` at once (a result arriving later is not stored); its workflow stops, and the ' +
        'backend is asked to cancel its job (best effort). Answers the job. Already cancelled: 200 as it is; done ' +
        'or failed: 409 JOB_NOT_ACTIVE.',
      tags: TAGS,
      responses: { 200: jobResponse, 404: notFound, 409: { description: 'The job has already ended', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        ctx.body = await service.cancel(ctx.params.id!);
      },
    },
    {
      method: 'POST',
      path: '/api/jobs/:id/retry',
      summary: 'Run a failed or cancelled job again',
      description:
        'Same job id, a new run: URL jobs download again, upload jobs read their persisted file. Answers the job ' +
        '(pending). 409 JOB_NOT_RETRYABLE for pending, processing or done jobs; 409 UPLOAD_MISSING when the ' +
        'uploaded file is gone.',
      tags: TAGS,
      responses: { 200: jobResponse, 404: notFound, 409: { description: 'Not retryable now', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        ctx.body = await service.retry(ctx.params.id!);
      },
    },
    {
      method: 'POST',
      path: '/api/webhooks/asr/:jobId',
      summary: "The transcription backend's callback",
      description:
        'Called by the backend with its job when the job ends, at the callback URL given at submission ' +
        '(`?token=` is a per-submission secret; without the right one the answer is 404 and nothing changes). ' +
        '200 {ok:true}: handled, or ignored (model-lifecycle and progress notices, stale or replayed calls, a job ' +
        'that was cancelled or already ended). 404 {ok:false}: no such job (or a wrong token). 500 {ok:false, ' +
        'error}: handling the result failed, and the job is failed. Not behind API_KEY. The token is checked before ' +
        'the body is read; only a job waiting for its result takes a body up to ASR_WEBHOOK_BODY_LIMIT (others: ' +
        'BODY_LIMIT, then 413).',
      tags: TAGS,
      access: 'open',
      // Authenticated by its token before the body is read: a stranger's body is never parsed, and only a job
      // waiting for its result may send a large one.
      admit: async (ctx: Context) => {
        ctx.state.formatError = webhookError;
        const state = await service.admitWebhook(ctx.params.jobId!, webhookToken(ctx));
        if (!state) {
          ctx.set('Connection', 'close');
          throw new NotFoundError('Job not found', 'JOB_NOT_FOUND');
        }
        return state === 'waiting' ? config.transcription.asrWebhookBodyLimitBytes : undefined;
      },
      requestBodies: [{ contentType: 'application/json', schema: transcriptionSchemas.transcriptionWebhook }],
      responses: {
        200: { description: 'Handled or ignored', schema: transcriptionSchemas.transcriptionWebhookResult },
        404: { description: 'No such job, or not authenticated', schema: transcriptionSchemas.transcriptionWebhookResult },
        500: { description: 'Processing failed; the job is failed', schema: transcriptionSchemas.transcriptionWebhookResult },
      },
      handler: async (ctx: Context) => {
        const answer = await service.webhook(ctx.params.jobId!, webhookToken(ctx), (ctx.request as { body?: unknown }).body);
        ctx.status = answer.status;
        ctx.body = answer.body;
      },
    },
  ];
};
