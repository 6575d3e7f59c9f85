import type { Context } from 'koa';
import { UnsupportedMediaTypeError } from '../core/errors.js';
import { getLedgerSchema, validateLedger } from './index.js';
import { apiSchemas } from '../schemas/index.js';
import { ledgerSchemas } from './schemas.js';
import type { RouteFactory } from '../api/deps.js';

/** The findings ledger over HTTP: validate a ledger, and serve its JSON Schema. */
export const ledgerRoutes: RouteFactory = () => [
  {
    method: 'POST',
    path: '/api/v1/ledger/validate',
    summary: 'Validate a findings ledger',
    description:
      'The body is a ledger. Answers 200 with `valid` and every violation (schema rules and the code-only rules: ' +
      'unique finding ids, end_line >= start_line), each with a JSON pointer into the ledger. A body that is not ' +
      'JSON is 400 INVALID_JSON; a non-JSON content type is 415.',
    tags: ['findings ledger'],
    responses: {
      200: { description: 'The validation result', schema: ledgerSchemas.ledgerValidation },
      400: { description: 'The body is not JSON', schema: apiSchemas.error },
      415: { description: 'The body is not application/json', schema: apiSchemas.error },
    },
    handler: async (ctx: Context) => {
      if (!ctx.request.is('application/json')) {
        throw new UnsupportedMediaTypeError('Send the ledger as application/json');
      }
      ctx.body = validateLedger((ctx.request as { body?: unknown }).body);
    },
  },
  {
    method: 'GET',
    path: '/api/v1/schema/findings-ledger.json',
    summary: 'The findings ledger JSON Schema (draft 2020-12)',
    tags: ['findings ledger'],
    responses: { 200: { description: 'The JSON Schema', schema: apiSchemas.findingsLedger, contentType: 'application/schema+json' } },
    handler: async (ctx: Context) => {
      ctx.type = 'application/schema+json';
      ctx.body = JSON.stringify(getLedgerSchema(), null, 2);
    },
  },
];
