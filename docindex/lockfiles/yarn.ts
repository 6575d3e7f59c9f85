import type { Collector } from './collect.js';
import { npmSpec, type NpmWanted, packageJsonWanted, registrySpec } from './npm-spec.js';
import { entries, field, readYarnSyntax, record, type Table, text } from './read.js';

/**
 * yarn.lock, classic (v1) and berry (`__metadata`). Each entry is keyed by the descriptors (`react@^18.2.0`;
 * berry: `react@npm:^18.2.0`) it resolves. Which dependencies are direct is the manifest's to say: package.json
 * when it comes along; else berry's entry for the root workspace (`app@workspace:.`), which lists the direct ones
 * without telling development ones apart; else, for classic, every package, with a warning.
 */

/** A descriptor's package name: up to its first `@` after a scope's. */
function descriptorName(descriptor: string): { name: string; range: string } {
  const at = descriptor.indexOf('@', descriptor.startsWith('@') ? 1 : 0);
  return at <= 0 ? { name: descriptor, range: '' } : { name: descriptor.slice(0, at), range: descriptor.slice(at + 1) };
}

interface Resolved {
  name: string;
  version: string;
}

/** The package an entry installs: berry's `resolution` says it (`react@npm:18.2.0`); classic's key and version. */
function installed(descriptor: string, entry: Table | undefined): Resolved | null {
  const resolution = text(field(entry, 'resolution'));
  if (resolution !== undefined) {
    const { name, range } = descriptorName(resolution);
    return range.startsWith('npm:') ? { name, version: range.slice(4) } : null;
  }
  const version = text(field(entry, 'version'));
  const { name, range } = descriptorName(descriptor);
  const spec = npmSpec(name, range);
  return spec.kind === 'registry' && version !== undefined ? { name: spec.name, version } : null;
}

function directFromLock(lock: Table, out: Collector): NpmWanted[] | null {
  const root = entries(lock).find(([descriptor]) => descriptor.endsWith('@workspace:.'));
  if (!root) return null;
  out.warn('yarn.lock does not tell development dependencies apart: send package.json with it to split them');
  return entries(field(record(root[1]), 'dependencies')).flatMap(([key, spec]) => (typeof spec === 'string' ? [{ key, spec, dev: false }] : []));
}

function readAll(lock: Table, out: Collector): void {
  out.warn('yarn.lock does not say which packages are direct: all are reported; send package.json with it to pick the direct ones');
  for (const [descriptor, entry] of entries(lock)) {
    if (descriptor === '__metadata') continue;
    const resolved = installed(descriptor, record(entry));
    if (resolved) out.add({ ...resolved, dev: false });
  }
}

/**
 * The entries by descriptor. The classic grammar splits a key listing several descriptors (`a@^1, a@^1.2`) itself;
 * berry's YAML keeps the key whole.
 */
function byDescriptor(lock: Table): Map<string, Table> {
  const index = new Map<string, Table>();
  for (const [key, value] of entries(lock)) {
    const entry = record(value);
    if (entry) for (const descriptor of key.split(/,\s*/)) index.set(descriptor, entry);
  }
  return index;
}

/** The entry a manifest's dependency resolved to, looked up by the descriptor each yarn writes for it. */
function lookUp(index: Map<string, Table>, wanted: NpmWanted): Resolved | null {
  for (const descriptor of [`${wanted.key}@${wanted.spec}`, `${wanted.key}@npm:${wanted.spec}`]) {
    const entry = index.get(descriptor);
    if (entry) return installed(descriptor, entry);
  }
  return null;
}

export function readYarnLock(content: string, manifest: string | undefined, out: Collector): void {
  const lock = readYarnSyntax(content);
  const direct = manifest !== undefined ? packageJsonWanted(manifest) : directFromLock(lock, out);
  if (direct === null) return readAll(lock, out);
  const index = byDescriptor(lock);
  for (const wanted of direct) {
    const spec = registrySpec(wanted, out);
    if (!spec) continue;
    const resolved = lookUp(index, wanted);
    if (!resolved) out.warn(`${wanted.key}@${spec.range}: not in yarn.lock, reported without a version`);
    out.add({ name: resolved?.name ?? spec.name, version: resolved?.version ?? null, range: spec.range, dev: wanted.dev });
  }
}
