import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import schema from './repo-config.schema.json' with { type: 'json' };

/**
 * The per-repository config file (`gristmill.json`, or Context7's `context7.json`), read leniently: comments and
 * trailing commas are fine, a key of the wrong type is ignored with a warning, a list item of the wrong type is
 * dropped with a warning, unknown keys (Context7's `$schema`, `url`, `public_key`, `branchVersions`, ...) are
 * ignored silently. Context7's length limits (projectTitle 1-100, description 10-200, each rule 5-200 characters)
 * only produce warnings: the values are kept. Nothing here throws.
 */

/** Looked up at the repository root in this order: `gristmill.json` takes precedence. */
export const CONFIG_FILE_NAMES = ['gristmill.json', 'context7.json'] as const;
export type ConfigFileName = (typeof CONFIG_FILE_NAMES)[number];

export interface PreviousVersion {
  tag: string;
  title?: string;
}

export interface RepoConfig {
  projectTitle?: string;
  description?: string;
  branch?: string;
  /** Repo-relative folders to index (no leading './' or '/', no trailing '/'); empty = everything. */
  folders: string[];
  excludeFolders: string[];
  excludeFiles: string[];
  /** Files to index although a default exclude (tests, fixtures, generated files, changelogs, ...) leaves them out. */
  includeFiles: string[];
  rules: string[];
  previousVersions: PreviousVersion[];
}

/** JSON Schema (draft 2020-12) of the config file, served by GET /api/v1/schema/service-config.json. */
export const repoConfigSchema: object = schema;

export function defaultRepoConfig(): RepoConfig {
  return { folders: [], excludeFolders: [], excludeFiles: [], includeFiles: [], rules: [], previousVersions: [] };
}

/** The config file to read from a repository's file list: a root-level one, `gristmill.json` first. */
export function findConfigFile(paths: readonly string[]): ConfigFileName | null {
  const set = new Set(paths.map((p) => p.replace(/^\.\//, '')));
  return CONFIG_FILE_NAMES.find((n) => set.has(n)) ?? null;
}

export function parseRepoConfig(text: string): { config: RepoConfig; warnings: string[] } {
  const config = defaultRepoConfig();
  const warnings: string[] = [];
  try {
    if (typeof text !== 'string' || text.trim().length === 0) {
      warnings.push('config file is empty; using defaults');
      return { config, warnings };
    }
    const errors: ParseError[] = [];
    const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    const value: unknown = parseJsonc(body, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });
    if (!isObject(value) || (errors.length && Object.keys(value).length === 0)) {
      warnings.push(errors.length ? `config file is not valid JSON (${describe(errors[0]!, body)}); using defaults` : 'config file is not a JSON object; using defaults');
      return { config, warnings };
    }
    if (errors.length) warnings.push(`config file has syntax errors (${describe(errors[0]!, body)}${errors.length > 1 ? ` and ${errors.length - 1} more` : ''}); used what could be read`);

    const projectTitle = stringKey(value, 'projectTitle', warnings);
    if (projectTitle !== undefined) {
      if (projectTitle.length === 0) warnings.push('projectTitle is empty; ignored');
      else {
        if (projectTitle.length > 100) warnings.push(`projectTitle is ${projectTitle.length} characters (Context7 allows 1-100); kept`);
        config.projectTitle = projectTitle;
      }
    }
    const description = stringKey(value, 'description', warnings);
    if (description !== undefined) {
      if (description.length === 0) warnings.push('description is empty; ignored');
      else {
        if (description.length < 10 || description.length > 200) warnings.push(`description is ${description.length} characters (Context7 allows 10-200); kept`);
        config.description = description;
      }
    }
    const branch = stringKey(value, 'branch', warnings);
    if (branch !== undefined) {
      if (branch.length === 0) warnings.push('branch is empty; ignored');
      else config.branch = branch;
    }

    config.folders = pathList(value, 'folders', warnings);
    config.excludeFolders = pathList(value, 'excludeFolders', warnings);
    config.excludeFiles = pathList(value, 'excludeFiles', warnings);
    config.includeFiles = pathList(value, 'includeFiles', warnings);

    const rules = stringList(value, 'rules', warnings);
    const seenRules = new Set<string>();
    rules.forEach((raw, i) => {
      const rule = raw.trim();
      if (!rule) {
        warnings.push(`rules[${i}] is empty; dropped`);
        return;
      }
      if (seenRules.has(rule)) {
        warnings.push(`rules[${i}] repeats an earlier rule; dropped`);
        return;
      }
      if (rule.length < 5 || rule.length > 200) warnings.push(`rules[${i}] is ${rule.length} characters (Context7 allows 5-200); kept`);
      seenRules.add(rule);
      config.rules.push(rule);
    });

    config.previousVersions = previousVersions(value, warnings);
  } catch (err) {
    // Unreachable in practice: a last guard so that a config file can never fail an indexing job.
    warnings.push(`config file could not be read (${err instanceof Error ? err.message : String(err)}); using defaults`);
    return { config: defaultRepoConfig(), warnings };
  }
  return { config, warnings };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(error: ParseError, text: string): string {
  let line = 1;
  let col = 1;
  for (let i = 0; i < error.offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      col = 1;
    } else col++;
  }
  return `${printParseErrorCode(error.error)} at line ${line}, column ${col}`;
}

function stringKey(obj: Record<string, unknown>, key: string, warnings: string[]): string | undefined {
  if (!Object.hasOwn(obj, key) || obj[key] === undefined) return undefined;
  const v = obj[key];
  if (v === null) return undefined;
  if (typeof v !== 'string') {
    warnings.push(`${key} must be a string; ignored`);
    return undefined;
  }
  return v.trim();
}

function stringList(obj: Record<string, unknown>, key: string, warnings: string[]): string[] {
  if (!Object.hasOwn(obj, key) || obj[key] === undefined || obj[key] === null) return [];
  const v = obj[key];
  if (!Array.isArray(v)) {
    warnings.push(`${key} must be an array of strings; ignored`);
    return [];
  }
  const out: string[] = [];
  v.forEach((item, i) => {
    if (typeof item === 'string') out.push(item);
    else warnings.push(`${key}[${i}] is not a string; dropped`);
  });
  return out;
}

/**
 * Folder and file lists: trimmed, backslashes turned into '/', leading './' and '/' and trailing '/' removed,
 * empty entries and repeats dropped.
 */
function pathList(obj: Record<string, unknown>, key: string, warnings: string[]): string[] {
  const out: string[] = [];
  stringList(obj, key, warnings).forEach((raw, i) => {
    const p = normalizeConfigPath(raw);
    if (!p) {
      warnings.push(`${key}[${i}] is empty; dropped`);
      return;
    }
    if (!out.includes(p)) out.push(p);
  });
  return out;
}

export function normalizeConfigPath(raw: string): string {
  let p = raw.trim().replace(/\\/g, '/').replace(/\/{2,}/g, '/');
  while (p.startsWith('./')) p = p.slice(2);
  p = p.replace(/^\/+/, '').replace(/\/+$/, '');
  return p === '.' ? '' : p;
}

function previousVersions(obj: Record<string, unknown>, warnings: string[]): PreviousVersion[] {
  const key = 'previousVersions';
  if (!Object.hasOwn(obj, key) || obj[key] === undefined || obj[key] === null) return [];
  const v = obj[key];
  if (!Array.isArray(v)) {
    warnings.push(`${key} must be an array of {tag, title} objects; ignored`);
    return [];
  }
  const out: PreviousVersion[] = [];
  const seen = new Set<string>();
  v.forEach((item, i) => {
    let entry: PreviousVersion | null = null;
    if (typeof item === 'string') {
      warnings.push(`${key}[${i}] is a plain string; treated as a tag`);
      entry = { tag: item.trim() };
    } else if (isObject(item)) {
      if (typeof item.tag !== 'string') {
        warnings.push(`${key}[${i}].tag must be a string; entry dropped`);
        return;
      }
      entry = { tag: item.tag.trim() };
      if (typeof item.title === 'string' && item.title.trim()) entry.title = item.title.trim();
      else if (item.title !== undefined && item.title !== null && typeof item.title !== 'string') warnings.push(`${key}[${i}].title must be a string; ignored`);
    } else {
      warnings.push(`${key}[${i}] must be an object with a tag; dropped`);
      return;
    }
    if (!entry.tag) {
      warnings.push(`${key}[${i}].tag is empty; entry dropped`);
      return;
    }
    if (seen.has(entry.tag)) {
      warnings.push(`${key}[${i}] repeats tag ${entry.tag}; dropped`);
      return;
    }
    seen.add(entry.tag);
    out.push(entry);
  });
  return out;
}
