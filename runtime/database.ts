import type { Options } from '@mikro-orm/postgresql';
import type { Logger } from '../core/log.js';
import { openOrm, type Orm } from '../db/orm.js';
import { databaseSchema } from './services.js';

/** The ORM over every entity and migration, the platform's and the services' (runtime/services.ts). */
export function openDatabase(databaseUrl: string, log?: Logger, extra: Partial<Options> = {}): Promise<Orm> {
  return openOrm(databaseUrl, databaseSchema, log, extra);
}
