import type { EntityClass, EntitySchema, MigrationObject } from '@mikro-orm/core';
import type { Client } from '@temporalio/client';
import type { ActivityDeps } from '../activities/deps.js';
import type { SlotPoolSpec } from '../activities/slots.js';
import type { AppDeps, RouteFactory } from '../api/deps.js';
import type { ErrorFormat } from '../api/errors.js';
import type { Config, ConfigSection } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { Orm } from '../db/orm.js';
import type { JobKind } from '../jobs/kinds.js';

/** A worker's activities, by name. */
export type Activities = Record<string, (...args: never[]) => unknown>;

/**
 * What a service is, declared once in its folder's module.ts and listed in runtime/services.ts: the platform (the
 * worker, the API, the database, the jobs machinery) reads everything it needs from here. See docs/development.md,
 * "Adding a service".
 */
export interface ServiceModule {
  /** A short name for logs and errors. */
  name: string;
  /** The job kinds its workflows run (status words, events; jobs/kinds.ts). */
  kinds?: JobKind[];
  /**
   * Its task queues, each with the activities that queue's workers register (besides the shared ones every worker
   * has). A queue is named once, by the service that owns it. A service may import its activities here, when a
   * worker starts: an API process then never loads what only activities use.
   */
  queues?: Record<string, (deps: ActivityDeps) => Activities | Promise<Activities>>;
  /** Concurrency pools its jobs take a slot of, and where each one's limit comes from (activities/slots.ts). */
  pools?: SlotPoolSpec[];
  /**
   * The module that exports its workflow functions (an absolute path, from `new URL('./workflow.ts',
   * import.meta.url)`): the workers bundle every service's (runtime/worker.ts).
   */
  workflows?: URL;
  /** Its settings: rows in sections of its own, read after the platform's (core/config.ts, ConfigSection). */
  configuration?: ConfigSection;
  /** Its HTTP routes; the JSON Schemas they name (its schemas.ts) are what validation and OpenAPI use. */
  routes?: RouteFactory[];
  errorFormats?: ErrorFormat[];
  entities?: (EntityClass<object> | EntitySchema)[];
  /** Its migrations; the platform runs every service's in the order of their names (timestamps). */
  migrations?: MigrationObject[];
  /** Runs once the database is migrated, in every process (the default embedding profile, say). */
  start?(deps: { orm: Orm; config: Config; log: Logger }): Promise<void>;
  /**
   * Brings the service's Temporal Schedules (jobs/schedules.ts) in line with its rows and settings: periodic work runs
   * on schedules, never on timers inside a process. Runs in API processes at start, once Temporal is connected,
   * beside serving requests; it must be safe to run from several processes at once.
   */
  schedules?(deps: { orm: Orm; config: Config; log: Logger; temporal: Client }): Promise<void>;
  /**
   * Runs in each API process once it serves requests, beside them (never holding them back): readying caches, say.
   * Whatever it starts in the background it stops in `stop`.
   */
  apiStarted?(deps: AppDeps): void;
  /** Releases what the service holds in this process (threads, models), at shutdown. */
  stop?(): Promise<void>;
}
