import type { SchemaObject } from 'ajv';
import error from './api/error.schema.json' with { type: 'json' };
import health from './api/health.schema.json' with { type: 'json' };
import healthzQuery from './api/healthz.query.schema.json' with { type: 'json' };
import ledgerValidation from './api/ledger-validation.schema.json' with { type: 'json' };
import findingsLedger from './findings-ledger.schema.json' with { type: 'json' };

/**
 * The JSON Schemas of the HTTP API. Routes name them for validation (api/validate.ts) and the OpenAPI document
 * (api/openapi.ts) is built from the same objects, so the two cannot drift.
 */
export const apiSchemas = {
  error: error as SchemaObject,
  health: health as SchemaObject,
  healthzQuery: healthzQuery as SchemaObject,
  ledgerValidation: ledgerValidation as SchemaObject,
  findingsLedger: findingsLedger as SchemaObject,
};
