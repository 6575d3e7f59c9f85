import type { Ajv2020, ErrorObject, SchemaObject, ValidateFunction } from 'ajv/dist/2020.js';
import { createAjv } from '../core/ajv.js';
import { type ErrorDetail, ValidationError } from '../core/errors.js';

/** Query strings are text: coerce to the schema's types (and single values to arrays). Bodies are taken as sent. */
const queryAjv = createAjv({ coerceTypes: 'array', useDefaults: true });
const bodyAjv = createAjv({ useDefaults: true });
const compiled = new WeakMap<SchemaObject, ValidateFunction>();

function compile(ajv: Ajv2020, schema: SchemaObject): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = ajv.getSchema(schema.$id ?? '') ?? ajv.compile(schema);
    compiled.set(schema, fn);
  }
  return fn;
}

function describe(e: ErrorObject): { pointer: string; message: string } {
  let pointer = e.instancePath;
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'required') {
    pointer += `/${(e.params as { missingProperty: string }).missingProperty}`;
    message = 'is required';
  }
  if (e.keyword === 'additionalProperties') {
    pointer += `/${(e.params as { additionalProperty: string }).additionalProperty}`;
    message = 'is not allowed';
  }
  if (e.keyword === 'enum') message += `: ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  return { pointer, message };
}

/**
 * Validates (and, for queries, coerces and fills defaults in) `value` in place. Throws a ValidationError whose
 * details point into the request (`/query/limit`, `/body/sourceUrl`).
 */
export function validate<T>(part: 'query' | 'body', schema: SchemaObject, value: unknown): T {
  const fn = compile(part === 'query' ? queryAjv : bodyAjv, schema);
  if (fn(value)) return value as T;
  const details: ErrorDetail[] = (fn.errors ?? []).map((e) => {
    const d = describe(e);
    return { pointer: `/${part}${d.pointer}`, message: d.message };
  });
  const first = details[0]!;
  const where = first.pointer.split('/').slice(2).join('.') || part;
  const noun = part === 'query' ? 'query parameter' : 'body field';
  throw new ValidationError(
    where === part ? `Invalid request ${part}: ${first.message}` : `Invalid ${noun} ${where}: ${first.message}`,
    'VALIDATION_ERROR',
    details,
  );
}
