import type { Collector } from './collect.js';
import { byPypiName, pyprojectWanted } from './pyproject.js';
import { field, readToml, record, type Table, tables, text } from './read.js';

/**
 * poetry.lock: every installed package as a `[[package]]` with its `version`; lock-version 1.x also marks each
 * `category = "dev"` or `"main"`. It does not say which packages the project asked for: pyproject.toml does, when
 * it comes along.
 */

const NOT_A_REGISTRY = new Set(['git', 'directory', 'file', 'url']);

function fromRegistry(pkg: Table, out: Collector): boolean {
  const type = text(field(record(field(pkg, 'source')), 'type'));
  if (type === undefined || !NOT_A_REGISTRY.has(type)) return true;
  out.warn(`${text(field(pkg, 'name'))}: installed from ${type === 'git' ? 'git' : 'a URL or a local folder'}, not a registry: skipped`);
  return false;
}

export function readPoetryLock(content: string, manifest: string | undefined, out: Collector): void {
  const packages = tables(field(readToml('poetry.lock', content), 'package'));
  if (manifest === undefined) {
    out.warn('poetry.lock does not say which packages are direct: all are reported; send pyproject.toml with it to pick the direct ones');
    for (const pkg of packages.filter((p) => fromRegistry(p, out))) {
      const dev = text(field(pkg, 'category')) === 'dev';
      out.add({ name: text(field(pkg, 'name')) ?? '', version: text(field(pkg, 'version')) ?? null, dev });
    }
    return;
  }
  const locked = byPypiName(packages);
  for (const { name, range, dev } of pyprojectWanted(manifest, out)) {
    const found = locked.get(name) ?? [];
    if (found.length === 0) out.warn(`${name}: not in poetry.lock, reported without a version`);
    const versions = found.length === 0 ? [null] : found.filter((p) => fromRegistry(p, out)).map((p) => text(field(p, 'version')) ?? null);
    for (const version of versions) out.add({ name, version, ...(range !== undefined && { range }), dev });
  }
}
