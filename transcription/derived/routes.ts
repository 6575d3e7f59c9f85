import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import type { Context } from 'koa';
import { ValidationError } from '../../core/errors.js';
import { apiSchemas } from '../../schemas/index.js';
import type { RouteFactory } from '../../api/deps.js';
import { transcriptionSchemas } from '../schemas.js';
import { requestedLanguage, SUMMARY_FORMATS, type SummaryFormat, TranscriptExtras } from './service.js';

const TAGS = ['transcription'];
const extraResponse = { description: 'The translation or summary', schema: transcriptionSchemas.transcriptionExtra };
const notFound = { description: 'No such job, translation or summary', schema: apiSchemas.error };
const notReady = { description: 'The transcript (or the translation, or summary) is not done', schema: apiSchemas.error };
const body = (ctx: Context) => ((ctx.request as { body?: unknown }).body ?? {}) as { language?: string };
/** A summary asked for in a language is addressed with `?language=`; without it, the one in the transcript's own. */
const summaryLanguage = (ctx: Context) => (typeof ctx.query.language === 'string' && ctx.query.language ? requestedLanguage(ctx.query.language, '/query/language') : null);

/** Sends a result file as an attachment. */
export async function sendFile(ctx: Context, file: { path: string; fileName: string; contentType: string }): Promise<void> {
  ctx.attachment(file.fileName);
  ctx.type = file.contentType;
  ctx.length = (await fs.stat(file.path)).size;
  ctx.body = createReadStream(file.path);
}

/**
 * Translations and summaries of a done transcript (docs/transcription.md, "Translations and summaries"). A
 * translation's files download from GET /api/jobs/:id/files/:format?language=<tag> (transcription/routes.ts).
 */
export const transcriptExtraRoutes: RouteFactory = (deps) => {
  const extras = new TranscriptExtras({
    config: deps.config,
    log: deps.log.child('transcription'),
    em: () => deps.orm.em.fork(),
    jobs: deps.jobs,
    temporal: deps.temporal,
  });
  return [
    {
      method: 'POST',
      path: '/api/jobs/:id/translations',
      summary: 'Translate a transcript into another language, with the same timing',
      description:
        '`{"language": "de"}` (a BCP 47 tag). The transcript\'s subtitle cues are translated by the language model in ' +
        'chunks, each cue keeping its start, end and speaker; SRT, VTT, TXT, MD and JSON follow, downloadable with ' +
        '`?language=` on the job\'s files. 202 with the translation (pending) when it starts, or starts again after it ' +
        'failed or was cancelled; 200 with it as it is when it exists (done or running). 400 UNKNOWN_LANGUAGE; 409 ' +
        'TRANSCRIPT_NOT_READY before the job is done. It appears in the job\'s `translations`, and its `extra` events ' +
        'on /api/jobs/events.',
      tags: TAGS,
      body: transcriptionSchemas.transcriptionTranslationRequest,
      responses: {
        200: extraResponse,
        202: extraResponse,
        400: { description: 'Invalid body, or UNKNOWN_LANGUAGE', schema: apiSchemas.error },
        404: notFound,
        409: notReady,
      },
      handler: async (ctx: Context) => {
        const language = requestedLanguage(body(ctx).language ?? '');
        const { view, started } = await extras.request(ctx.params.id!, 'translation', language);
        ctx.status = started ? 202 : 200;
        ctx.body = view;
      },
    },
    {
      method: 'DELETE',
      path: '/api/jobs/:id/translations/:language',
      summary: 'Cancel a running translation',
      description: 'Answers the translation, cancelled. Already cancelled: 200 as it is; done or failed: 409 JOB_NOT_ACTIVE. POST it again to run it again.',
      tags: TAGS,
      responses: { 200: extraResponse, 404: notFound, 409: { description: 'It has already ended', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        ctx.body = await extras.cancel(ctx.params.id!, 'translation', requestedLanguage(ctx.params.language!, '/path/language'));
      },
    },
    {
      method: 'POST',
      path: '/api/jobs/:id/summary',
      summary: 'Summarise a transcript, with timestamped chapters',
      description:
        '`{}` or `{"language": "de"}`. The language model summarises the transcript (in parts when it is long) and ' +
        'marks its chapters, each starting at the time of a segment. 202 when it starts (or starts again after it ' +
        'failed or was cancelled), 200 with it as it is when it exists. Its files: GET /api/jobs/:id/summary/md and ' +
        '/json; it appears in the job\'s `summary`.',
      tags: TAGS,
      body: transcriptionSchemas.transcriptionSummaryRequest,
      responses: { 200: extraResponse, 202: extraResponse, 400: { description: 'Invalid body, or UNKNOWN_LANGUAGE', schema: apiSchemas.error }, 404: notFound, 409: notReady },
      handler: async (ctx: Context) => {
        const raw = body(ctx).language;
        const { view, started } = await extras.request(ctx.params.id!, 'summary', raw === undefined ? null : requestedLanguage(raw));
        ctx.status = started ? 202 : 200;
        ctx.body = view;
      },
    },
    {
      method: 'DELETE',
      path: '/api/jobs/:id/summary',
      summary: 'Cancel a running summary',
      description: '`?language=de` for one asked for in that language. Already cancelled: 200 as it is; done or failed: 409 JOB_NOT_ACTIVE.',
      tags: TAGS,
      responses: { 200: extraResponse, 404: notFound, 409: { description: 'It has already ended', schema: apiSchemas.error } },
      handler: async (ctx: Context) => {
        ctx.body = await extras.cancel(ctx.params.id!, 'summary', summaryLanguage(ctx));
      },
    },
    {
      method: 'GET',
      path: '/api/jobs/:id/summary/:format',
      summary: 'Download the summary: md or json',
      description:
        'An attachment named after the title; `?language=de` for a summary asked for in that language. 409 SUMMARY_NOT_READY until it is done; 404 ' +
        'SUMMARY_NOT_FOUND when none was asked for.',
      tags: TAGS,
      responses: {
        200: { description: 'The file', contentType: 'application/octet-stream' },
        400: { description: 'Not a format', schema: apiSchemas.error },
        404: notFound,
        409: notReady,
      },
      handler: async (ctx: Context) => {
        const format = ctx.params.format as SummaryFormat;
        if (!SUMMARY_FORMATS.includes(format)) {
          throw new ValidationError(`Unknown format "${format}": use md or json`, 'VALIDATION_ERROR', [{ pointer: '/path/format', message: 'must be md or json' }]);
        }
        await sendFile(ctx, await extras.file(ctx.params.id!, 'summary', summaryLanguage(ctx), format));
      },
    },
  ];
};
