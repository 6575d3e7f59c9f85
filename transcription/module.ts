import { createPushActivities } from '../activities/push.js';
import type { ServiceModule } from '../runtime/service.js';
import { createTranscriptionActivities } from './activities.js';
import { createPlaylistActivities } from './playlist-activities.js';
import { transcriptionConfiguration } from './configuration.js';
import { Transcription, TranscriptionGroup, TranscriptionWebhook } from './entities.js';
import { transcriptionKind } from './kind.js';
import { migrations } from './migrations/index.js';
import { playlistRoutes } from './playlist-routes.js';
import { transcriptionRoutes } from './routes.js';

/** Transcription (docs/transcription.md): a video-site URL, upload or recording, through an ASR server, to transcripts. */
export const transcriptionService: ServiceModule = {
  name: 'transcription',
  kinds: [transcriptionKind],
  queues: { transcription: (deps) => ({ ...createTranscriptionActivities(deps), ...createPlaylistActivities(deps), ...createPushActivities(deps) }) },
  configuration: transcriptionConfiguration,
  workflows: new URL('./workflow.ts', import.meta.url),
  routes: [transcriptionRoutes, playlistRoutes],
  entities: [Transcription, TranscriptionWebhook, TranscriptionGroup],
  migrations,
};
