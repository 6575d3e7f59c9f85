import type { SchemaObject } from 'ajv';
import embeddingSettingsUpdate from './api/embedding-settings.update.schema.json' with { type: 'json' };
import embeddingTest from './api/embedding-test.schema.json' with { type: 'json' };
import error from './api/error.schema.json' with { type: 'json' };
import fsBrowseQuery from './api/fs-browse.query.schema.json' with { type: 'json' };
import indexingSettings from './api/indexing-settings.schema.json' with { type: 'json' };
import jobsStreamQuery from './api/jobs-stream.query.schema.json' with { type: 'json' };
import jobsQuery from './api/jobs.query.schema.json' with { type: 'json' };
import librariesQuery from './api/libraries.query.schema.json' with { type: 'json' };
import libraryCreate from './api/library.create.schema.json' with { type: 'json' };
import libraryUpdate from './api/library.update.schema.json' with { type: 'json' };
import versionCreate from './api/version.create.schema.json' with { type: 'json' };
import contextQuery from './api/context.query.schema.json' with { type: 'json' };
import libsSearchQuery from './api/libs-search.query.schema.json' with { type: 'json' };
import health from './api/health.schema.json' with { type: 'json' };
import healthzQuery from './api/healthz.query.schema.json' with { type: 'json' };
import ledgerValidation from './api/ledger-validation.schema.json' with { type: 'json' };
import findingsLedger from './findings-ledger.schema.json' with { type: 'json' };
import notificationsSubscribeBody from './api/notifications.subscribe.body.schema.json' with { type: 'json' };
import notificationsSubscribe from './api/notifications.subscribe.schema.json' with { type: 'json' };
import notificationsUnsubscribeBody from './api/notifications.unsubscribe.body.schema.json' with { type: 'json' };
import notificationsVapidKey from './api/notifications.vapid-key.schema.json' with { type: 'json' };
import transcriptionCreate from './api/transcription.create.schema.json' with { type: 'json' };
import transcriptionJobList from './api/transcription.job-list.schema.json' with { type: 'json' };
import transcriptionJob from './api/transcription.job.schema.json' with { type: 'json' };
import transcriptionListQuery from './api/transcription.list.query.schema.json' with { type: 'json' };
import transcriptionUpload from './api/transcription.upload.schema.json' with { type: 'json' };
import transcriptionWebhookResult from './api/transcription.webhook-result.schema.json' with { type: 'json' };
import transcriptionWebhook from './api/transcription.webhook.schema.json' with { type: 'json' };
import recipesCreate from './api/recipes.create.schema.json' with { type: 'json' };
import recipesExtractResult from './api/recipes.extract-result.schema.json' with { type: 'json' };
import recipesExtractStreamQuery from './api/recipes.extract-stream.query.schema.json' with { type: 'json' };
import recipesItem from './api/recipes.item.schema.json' with { type: 'json' };
import recipesListQuery from './api/recipes.list.query.schema.json' with { type: 'json' };
import recipesList from './api/recipes.list.schema.json' with { type: 'json' };
import recipesPhase from './api/recipes.phase.schema.json' with { type: 'json' };
import recipesResults from './api/recipes.results.schema.json' with { type: 'json' };
import recipesRetry from './api/recipes.retry.schema.json' with { type: 'json' };
import recipesStreamQuery from './api/recipes.stream.query.schema.json' with { type: 'json' };
import recipesUpdate from './api/recipes.update.schema.json' with { type: 'json' };

/**
 * The JSON Schemas of the HTTP API. Routes name them for validation (api/validate.ts) and the OpenAPI document
 * (api/routes.ts) is built from the same objects, so the two cannot drift.
 */
export const apiSchemas = {
  // transcription
  transcriptionCreate: transcriptionCreate as SchemaObject,
  transcriptionUpload: transcriptionUpload as SchemaObject,
  transcriptionListQuery: transcriptionListQuery as SchemaObject,
  transcriptionJob: transcriptionJob as SchemaObject,
  transcriptionJobList: transcriptionJobList as SchemaObject,
  transcriptionWebhook: transcriptionWebhook as SchemaObject,
  transcriptionWebhookResult: transcriptionWebhookResult as SchemaObject,
  // recipe queue
  recipesCreate: recipesCreate as SchemaObject,
  recipesItem: recipesItem as SchemaObject,
  recipesPhase: recipesPhase as SchemaObject,
  recipesResults: recipesResults as SchemaObject,
  recipesList: recipesList as SchemaObject,
  recipesListQuery: recipesListQuery as SchemaObject,
  recipesRetry: recipesRetry as SchemaObject,
  recipesStreamQuery: recipesStreamQuery as SchemaObject,
  recipesUpdate: recipesUpdate as SchemaObject,
  recipesExtractResult: recipesExtractResult as SchemaObject,
  recipesExtractStreamQuery: recipesExtractStreamQuery as SchemaObject,
  // web push (shared)
  notificationsSubscribeBody: notificationsSubscribeBody as SchemaObject,
  notificationsSubscribe: notificationsSubscribe as SchemaObject,
  notificationsUnsubscribeBody: notificationsUnsubscribeBody as SchemaObject,
  notificationsVapidKey: notificationsVapidKey as SchemaObject,
  // documentation index
  embeddingSettingsUpdate: embeddingSettingsUpdate as SchemaObject,
  embeddingTest: embeddingTest as SchemaObject,
  librariesQuery: librariesQuery as SchemaObject,
  libraryCreate: libraryCreate as SchemaObject,
  libraryUpdate: libraryUpdate as SchemaObject,
  versionCreate: versionCreate as SchemaObject,
  contextQuery: contextQuery as SchemaObject,
  libsSearchQuery: libsSearchQuery as SchemaObject,
  jobsQuery: jobsQuery as SchemaObject,
  jobsStreamQuery: jobsStreamQuery as SchemaObject,
  indexingSettings: indexingSettings as SchemaObject,
  fsBrowseQuery: fsBrowseQuery as SchemaObject,
  error: error as SchemaObject,
  health: health as SchemaObject,
  healthzQuery: healthzQuery as SchemaObject,
  ledgerValidation: ledgerValidation as SchemaObject,
  findingsLedger: findingsLedger as SchemaObject,
};
