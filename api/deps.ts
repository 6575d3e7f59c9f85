import type { Client } from '@temporalio/client';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { Orm } from '../db/orm.js';
import type { EventHub } from '../jobs/hub.js';
import type { JobStore } from '../jobs/store.js';
import type { RouteSpec } from './routes.js';

/** What the API's routes are built from (the HTTP twin of activities/deps.ts). */
export interface AppDeps {
  config: Config;
  log: Logger;
  orm: Orm;
  temporal: Client;
  hub: EventHub;
  jobs: JobStore;
  /** Every task queue's logical name, for the deep health check. */
  taskQueues: readonly string[];
  /** How long a deep health check waits for each task queue. */
  healthProbeTimeoutMs: number;
}

/** A service's (or a test's) routes, built from the API's dependencies. */
export type RouteFactory = (deps: AppDeps) => RouteSpec[];
