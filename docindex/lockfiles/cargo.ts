import semver from 'semver';
import type { Collector } from './collect.js';
import { entries, field, groupBy, list, readToml, record, type Table, tables, text } from './read.js';
import type { Wanted } from './types.js';

/**
 * Cargo.lock (v1 to v4) and Cargo.toml. In Cargo.lock the project's own crates (the workspace's members, path
 * dependencies) are the packages without a `source`; their `dependencies` entries (`name`, `name version` or, v1,
 * `name version (source)`) are the direct ones, and the matching `[[package]]` has the version. Cargo.lock does not
 * tell dev-dependencies apart: Cargo.toml does, when it comes along.
 */

const SECTIONS: [string, boolean][] = [
  ['dependencies', false],
  ['build-dependencies', false],
  ['dev-dependencies', true],
];

// `name`, `name version` or `name version (source)`.
const DEPENDENCY = /^(\S+)(?: (\S+))?(?: \((.+)\))?$/;

function fromTable(key: string, value: unknown, dev: boolean, workspace: Table | undefined, out: Collector): Wanted[] {
  const detailed = record(value);
  if (detailed && (field(detailed, 'git') !== undefined || field(detailed, 'path') !== undefined)) {
    out.warn(`${key}: comes from git or a local folder, not a registry: skipped`);
    return [];
  }
  // `name.workspace = true` takes the workspace's declaration of it.
  const inherited = field(detailed, 'workspace') === true ? field(workspace, key) : undefined;
  if (inherited !== undefined) return fromTable(key, inherited, dev, undefined, out);
  const range = text(detailed ? field(detailed, 'version') : value)?.trim();
  const exact = range?.startsWith('=') ? semver.valid(range.slice(1).trim()) : null;
  const name = text(field(detailed, 'package')) ?? key;
  return [{ name, ...(range !== undefined && { range }), ...(exact !== null && { exact }), dev }];
}

/** What a Cargo.toml asks for: its sections, per-target ones (`[target.'cfg(unix)'.dependencies]`) and the workspace's. */
export function cargoTomlWanted(content: string, out: Collector): Wanted[] {
  const manifest = readToml('Cargo.toml', content);
  const workspace = record(field(record(field(manifest, 'workspace')), 'dependencies'));
  const scopes = [manifest, ...entries(field(manifest, 'target')).flatMap(([, target]) => tables([target]))];
  const declared = scopes.flatMap((scope) =>
    SECTIONS.flatMap(([section, dev]) => entries(field(scope, section)).flatMap(([key, value]) => fromTable(key, value, dev, workspace, out))),
  );
  const shared = entries(workspace).flatMap(([key, value]) => fromTable(key, value, false, undefined, out));
  return [...declared, ...shared];
}

export function readCargoToml(content: string, out: Collector): void {
  for (const { name, range, exact, dev } of cargoTomlWanted(content, out)) {
    out.add({ name, version: exact ?? null, ...(range !== undefined && { range }), dev });
  }
}

/** Whether a crate is for development only: listed by the manifest only under dev-dependencies. */
function devOnly(wanted: Wanted[]): (name: string) => boolean {
  const prod = new Set(wanted.filter((w) => !w.dev).map((w) => w.name));
  const dev = new Set(wanted.filter((w) => w.dev).map((w) => w.name));
  return (name) => dev.has(name) && !prod.has(name);
}

export function readCargoLock(content: string, manifest: string | undefined, out: Collector): void {
  const packages = tables(field(readToml('Cargo.lock', content), 'package'));
  const ownCrates = packages.filter((pkg) => field(pkg, 'source') === undefined);
  const own = new Set(ownCrates.map((pkg) => text(field(pkg, 'name'))));
  const byName = groupBy(packages, (pkg) => text(field(pkg, 'name')));
  const wanted = manifest === undefined ? [] : cargoTomlWanted(manifest, out);
  const isDev = devOnly(wanted);
  const ranges = new Map(wanted.flatMap((w) => (w.range === undefined ? [] : [[w.name, w.range] as const])));
  if (manifest === undefined) out.warn('Cargo.lock does not tell dev-dependencies apart: send Cargo.toml with it to split them');
  for (const line of ownCrates.flatMap((pkg) => list(field(pkg, 'dependencies')))) {
    const [, name = '', version] = DEPENDENCY.exec(text(line) ?? '') ?? [];
    if (name === '' || own.has(name)) continue; // The workspace's own crates are not a registry's.
    const found = (byName.get(name) ?? []).filter((pkg) => version === undefined || text(field(pkg, 'version')) === version);
    if (found.length === 0) out.warn(`${name}: not in Cargo.lock's packages, skipped`);
    const range = ranges.get(name);
    for (const pkg of found) {
      if (!/^(registry|sparse)\+/.test(text(field(pkg, 'source')) ?? '')) {
        out.warn(`${name}: comes from git or a local folder, not a registry: skipped`);
        continue;
      }
      out.add({ name, version: text(field(pkg, 'version')) ?? null, ...(range !== undefined && { range }), dev: isDev(name) });
    }
  }
}
