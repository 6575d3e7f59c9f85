import type { SlotPoolSpec } from '../activities/slots.js';
import { indexJobKind } from './kind.js';
import { getConcurrency } from './settings.js';

/**
 * At most `indexing.concurrency` indexing jobs run at once (README, "Documentation index", Concurrency). The setting
 * changes through the API, which applies it to the pool at once (routes/index-settings.ts).
 */
export const indexingPool: SlotPoolSpec = {
  pool: 'indexing',
  kind: indexJobKind.name,
  limit: (deps) => getConcurrency(deps.orm.em, deps.config.cpuCount),
  configured: false,
};
