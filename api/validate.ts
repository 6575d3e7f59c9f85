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

/** Deeper JSON is no request this API takes, and recursive code further on (ajv, JSON.stringify) must not meet it. */
export const MAX_NESTING = 64;
/** No id, tag or format in a path is longer. */
export const MAX_PATH_PARAM_CHARS = 1024;

/** Half of a UTF-16 pair without the other (JSON's `"\ud800"`): PostgreSQL's json refuses it, and no text means it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * What no route takes, checked before any schema or handler sees a request: NUL or a lone surrogate in any text
 * (PostgreSQL refuses both, and no name, id or query means them) is 400 INVALID_CHARACTER; JSON nested deeper than
 * MAX_NESTING is 400 NESTING_TOO_DEEP; a path parameter over MAX_PATH_PARAM_CHARS is 400 VALIDATION_ERROR. Iterative,
 * so a hostile body cannot exhaust the stack, and linear in the input.
 */
export function rejectUnsafeInput(part: 'path' | 'query' | 'body', value: unknown): void {
  const stack: [unknown, string, number][] = [[value, '', 0]];
  while (stack.length) {
    const [v, pointer, depth] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\0')) {
        throw new ValidationError(`The request ${part} contains a NUL character`, 'INVALID_CHARACTER', [
          { pointer: `/${part}${pointer}`, message: 'must not contain NUL' },
        ]);
      }
      if (LONE_SURROGATE.test(v)) {
        throw new ValidationError(`The request ${part} contains text that is not well-formed Unicode (a lone surrogate)`, 'INVALID_CHARACTER', [
          { pointer: `/${part}${pointer}`, message: 'must be well-formed Unicode' },
        ]);
      }
      if (part === 'path' && v.length > MAX_PATH_PARAM_CHARS) {
        throw new ValidationError(`A path parameter is longer than ${MAX_PATH_PARAM_CHARS} characters`, 'VALIDATION_ERROR', [
          { pointer: `/path${pointer}`, message: `must be at most ${MAX_PATH_PARAM_CHARS} characters` },
        ]);
      }
    } else if (v !== null && typeof v === 'object') {
      if (depth >= MAX_NESTING) {
        throw new ValidationError(`The request ${part} is nested deeper than ${MAX_NESTING} levels`, 'NESTING_TOO_DEEP', [
          { pointer: `/${part}${pointer}`, message: 'is nested too deeply' },
        ]);
      }
      for (const [k, item] of Object.entries(v)) {
        const at = `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
        stack.push([k, at, depth + 1]); // keys are text too
        stack.push([item, at, depth + 1]);
      }
    }
  }
}
