import type { SchemaObject } from 'ajv';
import embeddingSettingsUpdate from './schemas/embedding-settings.update.schema.json' with { type: 'json' };
import embeddingTest from './schemas/embedding-test.schema.json' with { type: 'json' };
import fsBrowseQuery from './schemas/fs-browse.query.schema.json' with { type: 'json' };
import indexingSettings from './schemas/indexing-settings.schema.json' with { type: 'json' };
import jobsStreamQuery from './schemas/jobs-stream.query.schema.json' with { type: 'json' };
import jobsQuery from './schemas/jobs.query.schema.json' with { type: 'json' };
import librariesQuery from './schemas/libraries.query.schema.json' with { type: 'json' };
import libraryCreate from './schemas/library.create.schema.json' with { type: 'json' };
import libraryUpdate from './schemas/library.update.schema.json' with { type: 'json' };
import versionCreate from './schemas/version.create.schema.json' with { type: 'json' };
import contextQuery from './schemas/context.query.schema.json' with { type: 'json' };
import libsSearchQuery from './schemas/libs-search.query.schema.json' with { type: 'json' };
import lockfile from './schemas/lockfile.schema.json' with { type: 'json' };
import rerankProfile from './schemas/rerank-profile.schema.json' with { type: 'json' };

/** The JSON Schemas of the documentation index's routes, named for validation and the OpenAPI document (api/routes.ts). */
export const docindexSchemas = {
  embeddingSettingsUpdate: embeddingSettingsUpdate as SchemaObject,
  embeddingTest: embeddingTest as SchemaObject,
  fsBrowseQuery: fsBrowseQuery as SchemaObject,
  indexingSettings: indexingSettings as SchemaObject,
  jobsStreamQuery: jobsStreamQuery as SchemaObject,
  jobsQuery: jobsQuery as SchemaObject,
  librariesQuery: librariesQuery as SchemaObject,
  libraryCreate: libraryCreate as SchemaObject,
  libraryUpdate: libraryUpdate as SchemaObject,
  versionCreate: versionCreate as SchemaObject,
  contextQuery: contextQuery as SchemaObject,
  libsSearchQuery: libsSearchQuery as SchemaObject,
  lockfile: lockfile as SchemaObject,
  rerankProfile: rerankProfile as SchemaObject,
};
