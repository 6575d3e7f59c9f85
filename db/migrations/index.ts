import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000000_jobs } from './Migration20261121000000_jobs.js';
import { Migration20261122000100_push } from './Migration20261122000100_push.js';
import { Migration20261126000000_event_retention } from './Migration20261126000000_event_retention.js';

/**
 * Committed migrations, listed explicitly (not globbed) so they load the same under tsx, vitest and the compiled
 * build; never edit one that has shipped. These are the platform's (jobs, events, push); each service lists its own
 * in its folder, and `inNameOrder` runs them all by name, that is by timestamp, whichever folder they live in.
 */
export const platformMigrations: MigrationObject[] = [
  { name: 'Migration20261121000000_jobs', class: Migration20261121000000_jobs },
  { name: 'Migration20261122000100_push', class: Migration20261122000100_push },
  { name: 'Migration20261126000000_event_retention', class: Migration20261126000000_event_retention },
];

/** Every migration given, by name: a new migration is named after the time it was written, so it runs last. */
export function inNameOrder(lists: MigrationObject[][]): MigrationObject[] {
  const all = lists.flat();
  const names = new Set(all.map((m) => m.name));
  if (names.size !== all.length) throw new Error('two migrations share a name');
  return all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
