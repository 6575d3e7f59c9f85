import { describe, expect, it } from 'vitest';
import { migratedDatabase } from '../support/migrated-database.js';

/**
 * An existing install: a document indexed before Migration20261207000000_document_stats, then that migration. The
 * document stays, with no stat: the next re-index reads its file (docindex/pipeline.ts, `readSelected`).
 */
const db = migratedDatabase({ to: 'Migration20261206000000_vector_packs' });
const sql = db.sql;

describe('Migration20261207000000_document_stats', () => {
  it('keeps the documents indexed before, without a stat', async () => {
    await db.up();
    expect(await sql(`select id, file_path, checksum, size, mtime_ns from library_document`)).toEqual([
      { id: 'd', file_path: 'README.md', checksum: 'x', size: null, mtime_ns: null },
    ]);
  });
});
