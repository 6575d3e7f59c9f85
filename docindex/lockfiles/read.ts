import { parseSyml } from '@yarnpkg/parsers';
import { parse as parseTomlText } from 'smol-toml';
import YAML from 'yaml';
import { ValidationError } from '../../core/errors.js';
import { LIMITS, type LockfileFormat } from './types.js';

/**
 * Reading a file's syntax, and its values, as untrusted: every failure of a parser becomes LOCKFILE_INVALID with
 * where it happened, and values are read only as the file's own properties (a key named `constructor` or
 * `__proto__` finds nothing inherited).
 */
export type Table = Record<string, unknown>;

/** The error for a file that does not parse; `what` is its format, or what it is (`The manifest sent with ...`). */
export function invalid(what: string, message: string): ValidationError {
  return new ValidationError(`${what} is not valid: ${message}`, 'LOCKFILE_INVALID');
}

function reason(err: unknown): string {
  const e = err as { message?: unknown; line?: unknown; column?: unknown; location?: { start?: { line?: number; column?: number } } };
  const message = typeof e?.message === 'string' ? e.message.split('\n')[0]!.slice(0, 300) : String(err);
  // smol-toml's errors and the yarn.lock v1 grammar's carry their place apart from their message.
  const line = typeof e?.line === 'number' ? e.line : e?.location?.start?.line;
  const column = typeof e?.column === 'number' ? e.column : e?.location?.start?.column;
  return line !== undefined ? `${message} (line ${line}, column ${column})` : message;
}

/** The line and column of a JSON.parse error's character position, which V8 gives only as an offset. */
function jsonPlace(text: string, message: string): string {
  const position = /position (\d+)/.exec(message)?.[1];
  if (position === undefined) return '';
  const before = text.slice(0, Number(position));
  const line = before.split('\n').length;
  return ` (line ${line}, column ${Number(position) - before.lastIndexOf('\n')})`;
}

function topTable(format: LockfileFormat, value: unknown): Table {
  const table = record(value);
  if (!table) throw invalid(format, 'the top level is not a mapping');
  return table;
}

export function readJson(format: LockfileFormat, text: string): Table {
  try {
    return topTable(format, JSON.parse(text));
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    const message = reason(err);
    throw invalid(format, `${message}${jsonPlace(text, message)}`);
  }
}

/** Every YAML document of the file (pnpm 10 may put its own settings in a first one). */
export function readYamlDocuments(format: LockfileFormat, text: string): Table[] {
  try {
    return YAML.parseAllDocuments(text, { prettyErrors: true }).map((doc) => {
      const error = doc.errors[0];
      if (error) throw error;
      return topTable(format, doc.toJS({ maxAliasCount: LIMITS.maxYamlAliases }) ?? {});
    });
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    throw invalid(format, reason(err));
  }
}

export function readToml(format: LockfileFormat, text: string): Table {
  try {
    return parseTomlText(text, { maxDepth: LIMITS.maxTomlDepth });
  } catch (err) {
    throw invalid(format, reason(err));
  }
}

/** yarn.lock, either grammar: classic v1 and berry's YAML subset. A key listing several descriptors is split. */
export function readYarnSyntax(text: string): Table {
  try {
    return topTable('yarn.lock', parseSyml(text));
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    throw invalid('yarn.lock', reason(err));
  }
}

export function record(value: unknown): Table | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Table) : undefined;
}

export function field(table: Table | undefined, key: string): unknown {
  return table !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}

export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The own entries of a mapping, or none when the value is not one. */
export function entries(value: unknown): [string, unknown][] {
  const table = record(value);
  return table ? Object.entries(table) : [];
}

/** The mappings of an array of tables (TOML's `[[package]]`), skipping anything else. */
export function tables(value: unknown): Table[] {
  return list(value).flatMap((item) => {
    const table = record(item);
    return table ? [table] : [];
  });
}

/** Tables grouped by the key a function gives them (a package's name, normalised), skipping those without one. */
export function groupBy(items: Table[], key: (item: Table) => string | undefined): Map<string, Table[]> {
  const groups = new Map<string, Table[]>();
  for (const item of items) {
    const k = key(item);
    if (k !== undefined) groups.set(k, [...(groups.get(k) ?? []), item]);
  }
  return groups;
}
