import { createPushActivities } from '../activities/push.js';
import type { ServiceModule } from '../runtime/service.js';
import { createTranscriptionActivities } from './activities.js';
import { createPlaylistActivities } from './playlist-activities.js';
import { transcriptionConfiguration } from './configuration.js';
import { createTranscriptExtraActivities } from './derived/activities.js';
import { transcriptExtrasConfiguration } from './derived/configuration.js';
import { TranscriptExtra } from './derived/entities.js';
import { transcriptExtraKind } from './derived/kind.js';
import { transcriptExtraRoutes } from './derived/routes.js';
import { Transcription, TranscriptionGroup, TranscriptionWebhook } from './entities.js';
import { transcriptionKind } from './kind.js';
import { migrations } from './migrations/index.js';
import { playlistRoutes } from './playlist-routes.js';
import { transcriptionRoutes } from './routes.js';

/**
 * Transcription (docs/transcription.md): a video-site URL, upload or recording, through an ASR server, to transcripts;
 * and their translations and summaries through the language model (transcription/derived/).
 */
export const transcriptionService: ServiceModule = {
  name: 'transcription',
  kinds: [transcriptionKind, transcriptExtraKind],
  queues: {
    transcription: (deps) => ({
      ...createTranscriptionActivities(deps),
      ...createPlaylistActivities(deps),
      ...createTranscriptExtraActivities(deps),
      ...createPushActivities(deps),
    }),
  },
  configuration: {
    sections: { ...transcriptionConfiguration.sections, ...transcriptExtrasConfiguration.sections },
    table: { ...transcriptionConfiguration.table, ...transcriptExtrasConfiguration.table },
  },
  workflows: new URL('./workflow.ts', import.meta.url),
  routes: [transcriptionRoutes, playlistRoutes, transcriptExtraRoutes],
  entities: [Transcription, TranscriptionWebhook, TranscriptionGroup, TranscriptExtra],
  migrations,
};
