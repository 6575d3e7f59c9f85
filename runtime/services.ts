import { platformEntities } from '../db/entities/index.js';
import { inNameOrder, platformMigrations } from '../db/migrations/index.js';
import type { DatabaseSchema } from '../db/orm.js';
import { docIndexService } from '../docindex/module.js';
import { ledgerService } from '../ledger/module.js';
import { llmConfiguration } from '../llm/configuration.js';
import { recipesService } from '../recipes/module.js';
import { transcriptionService } from '../transcription/module.js';
import type { ServiceModule } from './service.js';

/** Every service, each declared once in its folder's module.ts. Adding a service is its folder plus one line here. */
export const services: readonly ServiceModule[] = [docIndexService, transcriptionService, recipesService, ledgerService];

/** Every task queue, in the services' order: what `npm start` polls and `/healthz?deep=1` probes. */
export const TASK_QUEUE_NAMES: readonly string[] = services.flatMap((s) => Object.keys(s.queues ?? {}));

/** The service that owns a queue, or undefined for a name no service declares. */
export function serviceOfQueue(queue: string): ServiceModule | undefined {
  return services.find((s) => s.queues && Object.hasOwn(s.queues, queue));
}

export const jobKinds = services.flatMap((s) => s.kinds ?? []);
export const serviceRoutes = services.flatMap((s) => s.routes ?? []);
export const errorFormats = services.flatMap((s) => s.errorFormats ?? []);
/** Every service's settings, after the shared language model's (llm/), which the recipe queue and transcription both read. */
export const configSections = [llmConfiguration, ...services.flatMap((s) => (s.configuration ? [s.configuration] : []))];
export const slotPools = services.flatMap((s) => s.pools ?? []);
export const workflowModules = services.flatMap((s) => (s.workflows ? [s.workflows] : []));

/** Every entity and migration: the platform's and each service's. */
export const databaseSchema: DatabaseSchema = {
  entities: [...platformEntities, ...services.flatMap((s) => s.entities ?? [])],
  migrations: inNameOrder([platformMigrations, ...services.map((s) => s.migrations ?? [])]),
};
