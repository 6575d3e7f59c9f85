/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded cluster, started for the run). */
import { readConfig } from '../runtime/config.js';
import { createLogger } from '../core/log.js';
import { registerSecret } from '../core/redact.js';
import { migrate } from '../db/orm.js';
import { openDatabase } from '../runtime/database.js';
import { provisionPostgres } from '../runtime/postgres.js';

const { config, secrets } = readConfig();
secrets.forEach(registerSecret);
const log = createLogger(config.logLevel, 'gristmill-migrate');
const pg = await provisionPostgres(config, log);
try {
  const orm = await openDatabase(pg.url, log);
  try {
    const applied = await migrate(orm, pg.url, log);
    log.info(applied.length ? `applied ${applied.length} migration(s)` : 'the schema is up to date');
  } finally {
    await orm.close();
  }
} catch (err) {
  log.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await pg.stop();
}
