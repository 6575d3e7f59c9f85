// Findings-ledger validation: the JSON Schema (via ajv, draft 2020-12) plus the
// rules a schema cannot express, all reported as { pointer, message, rule }.

import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { createAjv } from '../core/ajv.js';
import schemaJson from '../schemas/findings-ledger.schema.json' with { type: 'json' };

export interface LedgerError {
  /** JSON pointer to the offending value, e.g. /findings/2/severity ('' = root). */
  pointer: string;
  /** Human-readable message, naming the property where relevant. */
  message: string;
  /** Schema keyword (e.g. "enum") or code-rule name (e.g. "unique-id"). */
  rule?: string;
}

export interface LedgerValidationResult {
  valid: boolean;
  errors: LedgerError[];
}

export const LEDGER_SCHEMA_ID = 'https://gristmill.dev/schemas/findings-ledger.schema.json';

/** The findings-ledger JSON Schema. Shared, so treat as read-only; use getLedgerSchema() for a copy. */
export const ledgerSchema: Readonly<Record<string, unknown>> = schemaJson;

/** A fresh deep copy of the schema, safe to mutate or serve. */
export function getLedgerSchema(): Record<string, unknown> {
  return structuredClone(schemaJson) as Record<string, unknown>;
}

let compiled: ValidateFunction | undefined;

// Compiled lazily, once per process: importing this module stays cheap.
function schemaValidator(): ValidateFunction {
  if (!compiled) {
    compiled = createAjv().compile(schemaJson);
  }
  return compiled;
}

/** Validate a parsed ledger against the schema and the code-only rules. */
export function validateLedger(data: unknown): LedgerValidationResult {
  const validate = schemaValidator();
  validate(data);
  const errors = dedupe([...(validate.errors ?? []).flatMap(fromAjv), ...codeRuleErrors(data)]);
  return { valid: errors.length === 0, errors };
}

// --- schema errors -------------------------------------------------------

// Friendly wording for the schema's patterns (ajv would print the regex).
const PATTERN_MESSAGES: Record<string, string> = {
  '^[^\\r\\n]*$': 'must be a single line (no line breaks)',
};

function fromAjv(e: ErrorObject): LedgerError[] {
  const pointer = e.instancePath;
  const label = labelOf(pointer);
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'if':
      // The failing branch reports its own errors; "must match else schema" is noise.
      return [];
    case 'required': {
      const name = String(params.missingProperty);
      return [{ pointer: `${pointer}/${escapeToken(name)}`, message: `missing required property "${name}"`, rule: 'required' }];
    }
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const where = label ? ` in ${label}` : '';
      return [{ pointer: `${pointer}/${escapeToken(name)}`, message: `unknown property "${name}"${where} is not allowed`, rule: 'additionalProperties' }];
    }
    case 'false schema':
      // The only false schemas are the consolidation-only properties in the finding's `else`.
      if (e.schemaPath.includes('/else/')) {
        return [{ pointer, message: `${label} is only allowed on consolidation findings`, rule: 'consolidation-only' }];
      }
      return [{ pointer, message: `${label || 'value'} is not allowed`, rule: 'false schema' }];
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ');
      return [{ pointer, message: `${label || 'value'} must be one of: ${allowed}`, rule: 'enum' }];
    }
    case 'type': {
      const types = String(params.type).split(',').join(' or ');
      return [{ pointer, message: `${label || 'ledger'} must be ${types}`, rule: 'type' }];
    }
    case 'format':
      return [{ pointer, message: `${label || 'value'} must be a valid ${String(params.format)} string`, rule: 'format' }];
    case 'pattern': {
      const text = PATTERN_MESSAGES[String(params.pattern)] ?? e.message ?? 'is invalid';
      return [{ pointer, message: `${label || 'value'} ${text}`, rule: 'pattern' }];
    }
    default:
      return [{ pointer, message: `${label || 'ledger'} ${e.message ?? 'is invalid'}`, rule: e.keyword }];
  }
}

// "severity" for /findings/2/severity, "passes[1]" for /config/passes/1.
function labelOf(pointer: string): string {
  const tokens = pointer.split('/').slice(1).map(unescapeToken);
  const last = tokens.at(-1);
  if (last === undefined) return '';
  const parent = tokens.at(-2);
  return /^\d+$/.test(last) && parent !== undefined ? `${parent}[${last}]` : last;
}

function escapeToken(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

function unescapeToken(s: string): string {
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}

function dedupe(errors: LedgerError[]): LedgerError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = `${e.pointer}\u0000${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// --- rules JSON Schema cannot express ---------------------------------------

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// Checked on whatever parts are well-formed enough, so they are reported
// alongside schema errors rather than hidden behind them.
function codeRuleErrors(data: unknown): LedgerError[] {
  if (!isRecord(data) || !Array.isArray(data.findings)) return [];
  const errors: LedgerError[] = [];
  const firstById = new Map<string, number>();
  data.findings.forEach((f: unknown, i: number) => {
    if (!isRecord(f)) return;
    const { start_line: start, end_line: end, id } = f;
    if (typeof start === 'number' && typeof end === 'number' && end < start) {
      errors.push({
        pointer: `/findings/${i}/end_line`,
        message: `end_line (${end}) must be >= start_line (${start})`,
        rule: 'end-line-order',
      });
    }
    if (typeof id === 'string') {
      const first = firstById.get(id);
      if (first === undefined) {
        firstById.set(id, i);
      } else {
        errors.push({
          pointer: `/findings/${i}/id`,
          message: `duplicate id "${id}" (first used at /findings/${first}/id)`,
          rule: 'unique-id',
        });
      }
    }
  });
  return errors;
}
