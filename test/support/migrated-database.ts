import { afterAll, beforeAll } from 'vitest';
import type { Orm } from '../../db/orm.js';
import { openDatabase } from '../../runtime/database.js';
import { createTestDatabase } from './stack.js';

/** A migration's test database: migrated up to a migration, holding library /a/b and its document d (README.md). */
export interface MigratedDatabase {
  /** The database's ORM, once `beforeAll` has opened it. */
  orm(): Orm;
  sql<T = Record<string, unknown>>(q: string, params?: unknown[]): Promise<T[]>;
  /** Migrates up to `name`, or to the newest migration. */
  up(name?: string): Promise<unknown>;
  down(name: string): Promise<unknown>;
}

/**
 * Opens a fresh database for the file's tests (closed after them), as an install that last migrated to `to` (the
 * newest when left out), with the library /a/b (`totalSnippets`) and its document d, for the test's own rows.
 */
export function migratedDatabase(o: { to?: string; totalSnippets?: number } = {}): MigratedDatabase {
  let orm: Orm | undefined;
  const db: MigratedDatabase = {
    orm: () => orm!,
    sql: (q, params = []) => orm!.em.fork().execute(q, params),
    up: (name) => orm!.getMigrator().up(name ? { to: name } : undefined),
    down: (name) => orm!.getMigrator().down({ to: name }),
  };
  beforeAll(async () => {
    orm = await openDatabase(await createTestDatabase('m'));
    await db.up(o.to);
    await db.sql(
      `insert into library (id, title, source, source_url, state, total_snippets, trust_score, created_at, updated_at) values ('/a/b', 'B', 'local', '/b', 'indexed', ?, 5, now(), now())`,
      [o.totalSnippets ?? 1],
    );
    await db.sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values ('d', '/a/b', 'README.md', 'x', now())`);
  }, 120_000);
  afterAll(async () => {
    await orm?.close();
  });
  return db;
}
