import type { SchemaObject } from 'ajv';
import ledgerValidation from './schemas/ledger-validation.schema.json' with { type: 'json' };

/** The JSON Schemas of the findings ledger's routes, named for validation and the OpenAPI document (api/routes.ts). */
export const ledgerSchemas = {
  ledgerValidation: ledgerValidation as SchemaObject,
};
