import path from 'node:path';
import { ConfigError } from './errors.js';

/**
 * The machinery behind the settings rows (core/config.ts, and each service's configuration.ts): parsers that turn an environment variable's text into a
 * value (or stop startup with a message naming the variable), the loader that walks the table, and the reference
 * (docs/configuration.md) written from the same table.
 */
export type Env = Record<string, string | undefined>;

/** Turns a variable's text (trimmed, never empty) into a value, or throws a ConfigError naming the variable. */
export interface Parser<T> {
  (raw: string, name: string): T;
  /** What the variable takes, for the reference ('' when the meaning says it). */
  accepts: string;
}

export function parser<T>(accepts: string, parse: (raw: string, name: string) => T): Parser<T> {
  return Object.assign((raw: string, name: string) => parse(raw, name), { accepts });
}

/** A parser whose value is then checked (throwing a ConfigError that names the variable) or transformed. */
export function refine<T, U = T>(base: Parser<T>, then: (value: T, name: string) => U, accepts = base.accepts): Parser<U> {
  return parser(accepts, (raw, name) => then(base(raw, name), name));
}

export const text = (accepts = ''): Parser<string> => parser(accepts, (raw) => raw);

/** An absolute path (relative ones are taken from the working directory). */
export const resolvedPath = (): Parser<string> => parser('a path', (raw) => path.resolve(raw));

export function int(min: number, max: number): Parser<number> {
  return parser(`${min} to ${max}`, (raw, name) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
    }
    return n;
  });
}

export const bool = (): Parser<boolean> =>
  parser('`true` or `false`', (text, name) => {
    const raw = text.toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
    if (['0', 'false', 'no', 'off'].includes(raw)) return false;
    throw new ConfigError(`${name} must be true or false, got "${raw}"`);
  });

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** Parses sizes such as `1mb`, `512kb` or a plain byte count. */
export function parseSize(name: string, raw: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
  if (!m) throw new ConfigError(`${name} must be a size such as 1mb, 512kb or 1048576, got "${raw}"`);
  return Math.floor(Number(m[1]) * SIZE_UNITS[(m[2] ?? 'b').toLowerCase()]!);
}

export const size = (): Parser<number> => parser('a size: `512kb`, `1mb`, `2gb` or bytes', (raw, name) => parseSize(name, raw));

/** A URL, kept as written; `trailingSlashes` strips them (base URLs that paths are appended to). */
export function url(o: { trailingSlashes?: 'strip' } = {}): Parser<string> {
  return parser('a URL', (raw, name) => {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError(`${name} must be a URL, got a value that does not parse`);
    }
    return o.trailingSlashes === 'strip' ? raw.replace(/\/+$/, '') : raw;
  });
}

/** A base URL that paths are appended to: trailing slashes are stripped. */
export const baseUrl = url({ trailingSlashes: 'strip' });

/** One of `choices`; `anyCase` accepts them in any letter case (the value is then lower case). */
export function oneOf<const C extends string>(choices: readonly C[], o: { anyCase?: boolean } = {}): Parser<C> {
  return parser(choices.map((c) => `\`${c}\``).join(', '), (text, name) => {
    const raw = o.anyCase ? text.toLowerCase() : text;
    if (!choices.includes(raw as C)) throw new ConfigError(`${name} must be one of ${choices.join(', ')}`);
    return raw as C;
  });
}

/** A comma- or space-separated list, each entry checked by `item`. */
export function list<T>(accepts: string, item: (entry: string, name: string) => T): Parser<T[]> {
  return parser(accepts, (raw, name) => raw.split(/[\s,]+/).filter(Boolean).map((entry) => item(entry, name)));
}

/** A default the reference describes in words: a function of settings read before it, or nothing (`value` absent). */
export interface Derived<T, C> {
  text: string;
  value?(config: C): T;
}

interface SettingBase<T, S extends string> {
  variable: string;
  section: S;
  parse: Parser<T>;
  /** One line for the reference. */
  meaning: string;
  /** The variable's text must never be shown: the loader returns it for redaction; a function picks the secret part. */
  secret?: true | ((raw: string) => string);
}

/**
 * One environment variable. Unset (or blank), it takes its default: text, parsed as if it had been set and shown as
 * such in the reference, or a Derived value. A value that cannot be undefined must have a default.
 */
export type Setting<T, C, S extends string = string> = SettingBase<T, S> &
  (undefined extends T ? { default?: string | Derived<T, C> } : { default: string | Required<Derived<T, C>> });

/** Rows in the shape of the object they fill: a nested object (a section of the config) holds rows of its own. */
export type SettingsTable = { [key: string]: AnySetting | SettingsTable };

type AnySetting = SettingBase<unknown, string> & { default?: string | Derived<unknown, object> };

function isSetting(node: AnySetting | SettingsTable): node is AnySetting {
  return typeof node.variable === 'string';
}

/**
 * Reads every setting of `table` from `env` once, in table order (a Derived default sees the values above it).
 * Returns the values in the table's shape and the texts of the secrets that were set.
 */
export function readSettings<C extends object>(table: SettingsTable, env: Env): { values: C; secrets: string[] } {
  const values: Record<string, unknown> = {};
  const secrets: string[] = [];
  const fill = (rows: SettingsTable, into: Record<string, unknown>) => {
    for (const [key, node] of Object.entries(rows)) {
      if (!isSetting(node)) fill(node, (into[key] = {}) as Record<string, unknown>);
      else {
        const raw = env[node.variable]?.trim() || undefined;
        into[key] = readOne(node, raw, values);
        if (raw !== undefined && node.secret) secrets.push(node.secret === true ? raw : node.secret(raw));
      }
    }
  };
  fill(table, values);
  // The caller's table has one row per field of C (core/config.ts's ConfigTable has TypeScript check it).
  return { values: values as C, secrets: secrets.filter(Boolean) };
}

function readOne(s: AnySetting, raw: string | undefined, above: object): unknown {
  const fallback = s.default;
  if (raw !== undefined) return s.parse(raw, s.variable);
  if (typeof fallback === 'string') return s.parse(fallback, s.variable);
  return fallback?.value?.(above);
}

/** A variable the reference lists although its owner reads it (it is needed before, or without, a configuration). */
export interface ReadElsewhere<S extends string = string> {
  variable: string;
  section: S;
  default: string;
  accepts: string;
  meaning: string;
  readBy: string;
}

export interface SectionInfo {
  title: string;
  /** A sentence under the title. */
  about: string;
}

interface ReferenceRow {
  variable: string;
  section: string;
  default: string;
  accepts: string;
  meaning: string;
  secret?: boolean;
}

function referenceRows(table: SettingsTable): ReferenceRow[] {
  return Object.values(table).flatMap((node): ReferenceRow[] => {
    if (!isSetting(node)) return referenceRows(node);
    const d = node.default;
    return [{
      variable: node.variable,
      section: node.section,
      default: typeof d === 'string' ? (d === '' ? '' : `\`${d}\``) : (d?.text ?? ''),
      accepts: node.parse.accepts,
      meaning: node.meaning,
      secret: Boolean(node.secret),
    }];
  });
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

/** The reference: `head`, then one table per section (in `sections`' order), then `tail`. */
export function renderReference(o: {
  table: SettingsTable;
  elsewhere: ReadElsewhere[];
  sections: Record<string, SectionInfo>;
  head: string;
  tail: string;
}): string {
  const rows: ReferenceRow[] = [...referenceRows(o.table), ...o.elsewhere];
  const parts = [o.head.trim()];
  for (const [id, info] of Object.entries(o.sections)) {
    const mine = rows.filter((r) => r.section === id);
    if (!mine.length) continue;
    parts.push(`## ${info.title}\n\n${info.about}\n\n| variable | default | accepts | meaning |\n|---|---|---|---|`);
    parts[parts.length - 1] += mine
      .map((r) => `\n| \`${r.variable}\`${r.secret ? ' (secret)' : ''} | ${cell(r.default)} | ${cell(r.accepts)} | ${cell(r.meaning)} |`)
      .join('');
  }
  const orphans = rows.filter((r) => !(r.section in o.sections));
  if (orphans.length) throw new Error(`no section for ${orphans.map((r) => r.variable).join(', ')}`);
  parts.push(o.tail.trim());
  return parts.join('\n\n') + '\n';
}
