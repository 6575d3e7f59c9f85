import semver from 'semver';
import type { Collector } from './collect.js';
import { registrySpec } from './npm-spec.js';
import { entries, field, readYamlDocuments, record, type Table, text } from './read.js';

/**
 * pnpm-lock.yaml. The project's direct dependencies are its importer's: `importers['.']` in a workspace and in
 * lockfile v9, the top level in v5 and v6 otherwise. v5 keeps the ranges apart (`specifiers`) and writes versions
 * as `1.2.3_react@18.2.0` or `/name/1.2.3`; v6 writes `{ specifier, version }` with versions as `1.2.3(react@18.2.0)`
 * or `/name@1.2.3`; v9 as v6 without the leading slash.
 */

const SECTIONS: [string, boolean][] = [
  ['dependencies', false],
  ['optionalDependencies', false],
  ['devDependencies', true],
];

// `name@1.2.3` (v6, v9) or `name/1.2.3` (v5), the name possibly scoped.
const NAMED = /^((?:@[^/@]+\/)?[^/@]+)[@/](.+)$/;

/** The package and version a pnpm version field resolves to, peer suffixes dropped; null for a non-registry one. */
export function pnpmVersion(name: string, raw: string): { name: string; version: string } | null {
  // A peer suffix: `(react@18.2.0)` (v6, v9) or `_react@18.2.0` (v5; `_` never occurs in a semver version).
  const plain = (value: string) => value.split('(')[0]!.split('_')[0]!;
  const direct = plain(raw);
  if (semver.valid(direct)) return { name, version: direct };
  const named = NAMED.exec(raw.split('(')[0]!.replace(/^\//, ''));
  if (named && semver.valid(plain(named[2]!))) return { name: named[1]!, version: plain(named[2]!) };
  return null;
}

/** The document holding the lockfile: pnpm 10 may write its own environment's lock as a first document. */
function lockDocument(docs: Table[]): Table {
  return docs.findLast((doc) => field(doc, 'lockfileVersion') !== undefined) ?? docs.at(-1) ?? {};
}

function readImporter(importer: Table, out: Collector): void {
  const specifiers = record(field(importer, 'specifiers'));
  for (const [section, dev] of SECTIONS) {
    for (const [key, value] of entries(field(importer, section))) {
      const detailed = record(value);
      const raw = text(detailed ? field(detailed, 'version') : value);
      const range = text(detailed ? field(detailed, 'specifier') : field(specifiers, key));
      const spec = registrySpec({ key, spec: range ?? raw ?? '', dev }, out);
      if (!spec || raw === undefined) continue;
      if (/^(link|file|workspace):/.test(raw)) {
        out.warn(`${key}: comes from a workspace or a local folder, not a registry: skipped`);
        continue;
      }
      const resolved = pnpmVersion(spec.name, raw);
      if (!resolved) out.warn(`${key}: not installed from a registry, skipped`);
      else out.add({ ...resolved, ...(range !== undefined && { range: spec.range }), dev });
    }
  }
}

export function readPnpmLock(content: string, out: Collector): void {
  const lock = lockDocument(readYamlDocuments('pnpm-lock.yaml', content));
  const importers = record(field(lock, 'importers'));
  if (!importers) return readImporter(lock, out);
  const root = record(field(importers, '.'));
  if (Object.keys(importers).some((path) => path !== '.')) out.warn("Only the root project's dependencies are read, not the other workspace projects'");
  if (root) readImporter(root, out);
  else out.warn('The lockfile has no root project (importers["."]): no dependencies read');
}
