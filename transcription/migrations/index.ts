import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000_transcription } from './Migration20261122000000_transcription.js';
import { Migration20261127000000_transcription_backend } from './Migration20261127000000_transcription_backend.js';
import { Migration20261128121000_transcription_groups } from './Migration20261128121000_transcription_groups.js';
import { Migration20261130000000_transcript_extras } from './Migration20261130000000_transcript_extras.js';

/** This service's committed migrations; the platform runs every service's in the order of their names (db/migrations/index.ts). */
export const migrations: MigrationObject[] = [
  { name: 'Migration20261122000000_transcription', class: Migration20261122000000_transcription },
  { name: 'Migration20261127000000_transcription_backend', class: Migration20261127000000_transcription_backend },
  { name: 'Migration20261128121000_transcription_groups', class: Migration20261128121000_transcription_groups },
  { name: 'Migration20261130000000_transcript_extras', class: Migration20261130000000_transcript_extras },
];
