import type { SchemaObject } from 'ajv';
import transcriptionExtra from './schemas/transcription.extra.schema.json' with { type: 'json' };
import transcriptionCreate from './schemas/transcription.create.schema.json' with { type: 'json' };
import transcriptionJobList from './schemas/transcription.job-list.schema.json' with { type: 'json' };
import transcriptionJob from './schemas/transcription.job.schema.json' with { type: 'json' };
import transcriptionListQuery from './schemas/transcription.list.query.schema.json' with { type: 'json' };
import transcriptionPlaylistCreate from './schemas/transcription.playlist-create.schema.json' with { type: 'json' };
import transcriptionSegmentEdit from './schemas/transcription.segment-edit.schema.json' with { type: 'json' };
import transcriptionSummaryRequest from './schemas/transcription.summary-request.schema.json' with { type: 'json' };
import transcriptionTranslationRequest from './schemas/transcription.translation-request.schema.json' with { type: 'json' };
import transcriptionSpeakers from './schemas/transcription.speakers.schema.json' with { type: 'json' };
import transcriptionUpload from './schemas/transcription.upload.schema.json' with { type: 'json' };
import transcriptionWebhookResult from './schemas/transcription.webhook-result.schema.json' with { type: 'json' };
import transcriptionWebhook from './schemas/transcription.webhook.schema.json' with { type: 'json' };

/** The JSON Schemas of transcription's routes, named for validation and the OpenAPI document (api/routes.ts). */
export const transcriptionSchemas = {
  transcriptionCreate: transcriptionCreate as SchemaObject,
  transcriptionExtra: transcriptionExtra as SchemaObject,
  transcriptionJobList: transcriptionJobList as SchemaObject,
  transcriptionJob: transcriptionJob as SchemaObject,
  transcriptionListQuery: transcriptionListQuery as SchemaObject,
  transcriptionPlaylistCreate: transcriptionPlaylistCreate as SchemaObject,
  transcriptionSegmentEdit: transcriptionSegmentEdit as SchemaObject,
  transcriptionSpeakers: transcriptionSpeakers as SchemaObject,
  transcriptionSummaryRequest: transcriptionSummaryRequest as SchemaObject,
  transcriptionTranslationRequest: transcriptionTranslationRequest as SchemaObject,
  transcriptionUpload: transcriptionUpload as SchemaObject,
  transcriptionWebhookResult: transcriptionWebhookResult as SchemaObject,
  transcriptionWebhook: transcriptionWebhook as SchemaObject,
};
