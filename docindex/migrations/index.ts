import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121010000_library } from './Migration20261121010000_library.js';
import { Migration20261122010000_embedding_profiles } from './Migration20261122010000_embedding_profiles.js';
import { Migration20261124000000_search } from './Migration20261124000000_search.js';
import { Migration20261125000000_search_headings } from './Migration20261125000000_search_headings.js';
import { Migration20261127000000_search_stems } from './Migration20261127000000_search_stems.js';
import { Migration20261128000000_snippet_neighbours } from './Migration20261128000000_snippet_neighbours.js';
import { Migration20261129000000_search_terms } from './Migration20261129000000_search_terms.js';
import { Migration20261201000000_library_sources } from './Migration20261201000000_library_sources.js';
import { Migration20261203000000_rerank_profiles } from './Migration20261203000000_rerank_profiles.js';
import { Migration20261205000000_staged_search_vectors } from './Migration20261205000000_staged_search_vectors.js';
import { Migration20261206000000_vector_packs } from './Migration20261206000000_vector_packs.js';
import { Migration20261207000000_document_stats } from './Migration20261207000000_document_stats.js';
import { Migration20261208000000_search_identifier_words } from './Migration20261208000000_search_identifier_words.js';
import { Migration20261209000000_search_vector_trigger_when } from './Migration20261209000000_search_vector_trigger_when.js';
import { Migration20261210000000_search_vector_parts } from './Migration20261210000000_search_vector_parts.js';
import { Migration20261211000000_search_stamp } from './Migration20261211000000_search_stamp.js';
import { Migration20261212000000_staged_storage } from './Migration20261212000000_staged_storage.js';
import { Migration20261213000000_content_vectors } from './Migration20261213000000_content_vectors.js';
import { Migration20261214000000_binary_content_vectors } from './Migration20261214000000_binary_content_vectors.js';
import { Migration20261215000000_snippet_scope_keys } from './Migration20261215000000_snippet_scope_keys.js';

/** This service's committed migrations; the platform runs every service's in the order of their names (db/migrations/index.ts). */
export const migrations: MigrationObject[] = [
  { name: 'Migration20261121010000_library', class: Migration20261121010000_library },
  { name: 'Migration20261122010000_embedding_profiles', class: Migration20261122010000_embedding_profiles },
  { name: 'Migration20261124000000_search', class: Migration20261124000000_search },
  { name: 'Migration20261125000000_search_headings', class: Migration20261125000000_search_headings },
  { name: 'Migration20261127000000_search_stems', class: Migration20261127000000_search_stems },
  { name: 'Migration20261128000000_snippet_neighbours', class: Migration20261128000000_snippet_neighbours },
  { name: 'Migration20261129000000_search_terms', class: Migration20261129000000_search_terms },
  { name: 'Migration20261201000000_library_sources', class: Migration20261201000000_library_sources },
  { name: 'Migration20261203000000_rerank_profiles', class: Migration20261203000000_rerank_profiles },
  { name: 'Migration20261205000000_staged_search_vectors', class: Migration20261205000000_staged_search_vectors },
  { name: 'Migration20261206000000_vector_packs', class: Migration20261206000000_vector_packs },
  { name: 'Migration20261207000000_document_stats', class: Migration20261207000000_document_stats },
  { name: 'Migration20261208000000_search_identifier_words', class: Migration20261208000000_search_identifier_words },
  { name: 'Migration20261209000000_search_vector_trigger_when', class: Migration20261209000000_search_vector_trigger_when },
  { name: 'Migration20261210000000_search_vector_parts', class: Migration20261210000000_search_vector_parts },
  { name: 'Migration20261211000000_search_stamp', class: Migration20261211000000_search_stamp },
  { name: 'Migration20261212000000_staged_storage', class: Migration20261212000000_staged_storage },
  { name: 'Migration20261213000000_content_vectors', class: Migration20261213000000_content_vectors },
  { name: 'Migration20261214000000_binary_content_vectors', class: Migration20261214000000_binary_content_vectors },
  { name: 'Migration20261215000000_snippet_scope_keys', class: Migration20261215000000_snippet_scope_keys },
];
