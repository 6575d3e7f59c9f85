import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000000_jobs } from './Migration20261121000000_jobs.js';
import { Migration20261121010000_library } from './Migration20261121010000_library.js';
import { Migration20261122000000_transcription } from './Migration20261122000000_transcription.js';
import { Migration20261122000100_push } from './Migration20261122000100_push.js';
import { Migration20261122010000_embedding_profiles } from './Migration20261122010000_embedding_profiles.js';
import { Migration20261123000000_recipes } from './Migration20261123000000_recipes.js';
import { Migration20261124000000_search } from './Migration20261124000000_search.js';
import { Migration20261125000000_search_headings } from './Migration20261125000000_search_headings.js';
import { Migration20261126000000_event_retention } from './Migration20261126000000_event_retention.js';
import { Migration20261127000000_search_stems } from './Migration20261127000000_search_stems.js';
import { Migration20261127000000_transcription_backend } from './Migration20261127000000_transcription_backend.js';
import { Migration20261128000000_snippet_neighbours } from './Migration20261128000000_snippet_neighbours.js';
import { Migration20261129000000_search_terms } from './Migration20261129000000_search_terms.js';

/**
 * Committed migrations, listed explicitly (not globbed) so they load the same under tsx, vitest and the compiled
 * build. Append new ones at the end; never edit one that has shipped.
 */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261121000000_jobs', class: Migration20261121000000_jobs },
  { name: 'Migration20261121010000_library', class: Migration20261121010000_library },
  { name: 'Migration20261122000000_transcription', class: Migration20261122000000_transcription },
  { name: 'Migration20261122000100_push', class: Migration20261122000100_push },
  { name: 'Migration20261122010000_embedding_profiles', class: Migration20261122010000_embedding_profiles },
  { name: 'Migration20261123000000_recipes', class: Migration20261123000000_recipes },
  { name: 'Migration20261124000000_search', class: Migration20261124000000_search },
  { name: 'Migration20261125000000_search_headings', class: Migration20261125000000_search_headings },
  { name: 'Migration20261126000000_event_retention', class: Migration20261126000000_event_retention },
  { name: 'Migration20261127000000_search_stems', class: Migration20261127000000_search_stems },
  { name: 'Migration20261127000000_transcription_backend', class: Migration20261127000000_transcription_backend },
  { name: 'Migration20261128000000_snippet_neighbours', class: Migration20261128000000_snippet_neighbours },
  { name: 'Migration20261129000000_search_terms', class: Migration20261129000000_search_terms },
];
