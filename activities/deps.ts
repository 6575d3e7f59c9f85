import type { Client } from '@temporalio/client';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { Orm } from '../db/orm.js';
import type { JobStore } from '../jobs/store.js';

/** What activities are built from. Each activity execution forks its own EntityManager (docs/jobs.md, "Activities"). */
export interface ActivityDeps {
  config: Config;
  orm: Orm;
  jobs: JobStore;
  log: Logger;
  /** For activities that start or signal workflows (e.g. the concurrency slots). */
  temporal: Client;
}
