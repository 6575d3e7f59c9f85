import type { Context } from 'koa';
import { apiSchemas } from '../schemas/index.js';
import type { RouteFactory } from '../api/deps.js';
import { PlaylistService } from './playlists.js';
import { transcriptionSchemas } from './schemas.js';
import type { AudioMode } from './transcripts/audio.js';

const TAGS = ['transcription'];
const groupResponse = { description: 'The playlist: its status, skipped entries and jobs' };
const notFound = { description: 'No such playlist', schema: apiSchemas.error };

/** Playlists under /api/playlists (docs/transcription.md, "Playlists"); their jobs are /api/jobs jobs. */
export const playlistRoutes: RouteFactory = (deps) => {
  const service = new PlaylistService({
    config: deps.config,
    log: deps.log.child('playlists'),
    em: () => deps.orm.em.fork(),
    jobs: deps.jobs,
    temporal: deps.temporal,
    hub: deps.hub,
  });
  return [
    {
      method: 'POST',
      path: '/api/playlists',
      summary: 'Transcribe a playlist or channel: one job per entry',
      description:
        '`{url, mode?}`. Answers 201 with the playlist (`expanding`); yt-dlp lists its entries (the first ' +
        'TRANSCRIPTION_PLAYLIST_MAX_ENTRIES) and each becomes a job of GET /api/jobs?group=<id>, with its own progress, ' +
        'cancel and retry. Entries over TRANSCRIPTION_MAX_DURATION_SECONDS, private or removed are `skipped`, with a ' +
        'code and a reason. The same URL while its playlist is expanding or has jobs running: 200 with that playlist. ' +
        'A listing that fails leaves it `failed` with a coded `error` (EMPTY_PLAYLIST, NOT_A_PLAYLIST, ...). 400 ' +
        'ADDRESS_NOT_ALLOWED for an internal address.',
      tags: TAGS,
      body: transcriptionSchemas.transcriptionPlaylistCreate,
      responses: {
        200: { description: 'The playlist already asked for (expanding, or with jobs running)' },
        201: groupResponse,
        400: { description: 'Invalid request, or an address the outbound guard refuses', schema: apiSchemas.error },
      },
      handler: async (ctx: Context) => {
        const body = (ctx.request as { body?: unknown }).body as { url: string; mode?: AudioMode };
        const { group, created } = await service.create({ url: body.url, mode: body.mode ?? 'auto' });
        ctx.status = created ? 201 : 200;
        ctx.set('Location', `/api/playlists/${group.id}`);
        ctx.body = group;
      },
    },
    {
      method: 'GET',
      path: '/api/playlists/:id',
      summary: 'A playlist, with its jobs and their statuses',
      tags: TAGS,
      responses: { 200: groupResponse, 404: notFound },
      handler: async (ctx: Context) => {
        ctx.body = await service.get(ctx.params.id!);
      },
    },
    {
      method: 'DELETE',
      path: '/api/playlists/:id',
      summary: 'Cancel a playlist: its expansion and every job of it still pending or processing',
      tags: TAGS,
      responses: { 200: groupResponse, 404: notFound },
      handler: async (ctx: Context) => {
        ctx.body = await service.cancel(ctx.params.id!);
      },
    },
  ];
};
