import { EmbeddingProfile } from '../../docindex/entities/embedding-profile.js';
import { EventStream, JobEvent } from './job-event.js';
import { Job } from './job.js';
import { PushSubscription } from './push-subscription.js';
import { RecipeItem } from '../../recipes/entities.js';
import { Transcription, TranscriptionWebhook } from '../../transcription/entities.js';
import { Library, LibraryVersion } from '../../docindex/entities/library.js';
import { LibraryDocument, LibraryRules, SearchTerm, Setting, Snippet, SnippetEmbedding, StagedDocument } from '../../docindex/entities/snippet.js';

export { EventStream, Job, JobEvent, Library, LibraryDocument, LibraryRules, LibraryVersion, SearchTerm, Setting, Snippet, SnippetEmbedding, StagedDocument };
/** Every entity, for the ORM config and the schema-drift test. */
export const entities = [
  Job,
  JobEvent,
  EventStream,
  Library,
  LibraryVersion,
  LibraryDocument,
  Snippet,
  SearchTerm,
  SnippetEmbedding,
  LibraryRules,
  StagedDocument,
  Setting,
  EmbeddingProfile,
  Transcription,
  TranscriptionWebhook,
  PushSubscription,
  RecipeItem,
];
