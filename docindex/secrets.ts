import type { QueryResult } from '@mikro-orm/core';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import { secretBox } from '../core/secrets.js';
import { apiKeyContext } from './entities/embedding-profile.js';
import { gitHostTokenContext } from './entities/library.js';
import type { Orm } from '../db/orm.js';

/**
 * Seals secrets that earlier versions stored in plain text (git-host tokens, embedding API keys). Run by every
 * process at start, after the migrations, rather than as a migration: the key lives outside the database
 * (SECRETS_KEY or DATA_DIR/secrets.key), and `npm run migrate` against a database must not need it. Idempotent and
 * safe to race: only values that are not sealed are read, and each is replaced only if it is still the plain value
 * that was read. Answers how many values were sealed.
 */
export async function sealPlainSecrets(orm: Orm, config: Pick<Config, 'dataDir' | 'secretsKey'>, log: Logger): Promise<number> {
  const em = orm.em.fork();
  const tokens: { id: string; token: string }[] = await em.execute(
    `select id, git_host_token as token from library where git_host_token is not null and git_host_token not like 'gmsec:%'`,
  );
  const keys: { id: string; key: string; base_url: string | null }[] = await em.execute(
    `select id, config->>'apiKey' as key, config->>'baseUrl' as base_url from embedding_profile
     where jsonb_typeof(config->'apiKey') = 'string' and config->>'apiKey' not like 'gmsec:%'`,
  );
  if (!tokens.length && !keys.length) return 0;
  const secrets = secretBox(config, log);
  let sealed = 0;
  for (const t of tokens) {
    const res = await em.execute<QueryResult>(
      `update library set git_host_token = ? where id = ? and git_host_token = ?`,
      [secrets.seal(t.token, gitHostTokenContext(t.id)), t.id, t.token],
      'run',
    );
    sealed += res.affectedRows;
  }
  for (const k of keys) {
    const res = await em.execute<QueryResult>(
      `update embedding_profile set config = jsonb_set(config, '{apiKey}', to_jsonb(?::text)) where id = ? and config->>'apiKey' = ?`,
      [secrets.seal(k.key, apiKeyContext(k.id, k.base_url)), k.id, k.key],
      'run',
    );
    sealed += res.affectedRows;
  }
  if (sealed) log.info('sealed secrets stored in plain text by an earlier version', { count: sealed });
  return sealed;
}
