import { MikroORM, type Options } from '@mikro-orm/postgresql';
import type { MigrationObject } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import pg from 'pg';
import type { Logger } from '../core/log.js';

export type Orm = MikroORM;

/** What the database holds: every entity and every migration, the platform's and the services' (runtime/services.ts). */
export interface DatabaseSchema {
  entities: NonNullable<Options['entities']>;
  migrations: MigrationObject[];
}

export function ormOptions(databaseUrl: string, schema: DatabaseSchema, extra: Partial<Options> = {}, log?: Logger): Options {
  return {
    // The ORM's own messages (e.g. "Applied migration") go to our logger, not straight to stdout.
    logger: (message: string) => log?.debug(message),
    clientUrl: databaseUrl,
    entities: schema.entities,
    extensions: [Migrator],
    migrations: { migrationsList: schema.migrations, transactional: true, allOrNothing: true, snapshot: false },
    // Entities are plain EntitySchemas: no reflection, no discovery cache on disk.
    discovery: { warnWhenNoEntities: true },
    metadataCache: { enabled: false },
    // Each request and each activity execution forks its own context; the global one is never used for work.
    allowGlobalContext: false,
    pool: { min: 0, max: 10 },
    debug: false,
    ...extra,
  };
}

export async function openOrm(databaseUrl: string, schema: DatabaseSchema, log?: Logger, extra: Partial<Options> = {}): Promise<Orm> {
  return MikroORM.init(ormOptions(databaseUrl, schema, extra, log));
}

const MIGRATION_LOCK = 74_551_902; // arbitrary, fixed: the advisory lock id of schema migrations

/**
 * Applies pending migrations. The API and every worker process migrate at start, so runs are serialised with a
 * session advisory lock held on a dedicated connection.
 */
export async function migrate(orm: Orm, databaseUrl: string, log?: Logger): Promise<string[]> {
  const lock = new pg.Client({ connectionString: databaseUrl });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const applied = await orm.getMigrator().up();
    const names = applied.map((m) => m.name);
    if (names.length) log?.info('migrations applied', { names: names.join(',') });
    return names;
  } finally {
    await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await lock.end();
  }
}
