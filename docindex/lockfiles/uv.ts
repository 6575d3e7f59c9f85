import { type Collector, pep503 } from './collect.js';
import { byPypiName } from './pyproject.js';
import { entries, field, readToml, record, type Table, tables, text } from './read.js';

/**
 * uv.lock: every package as a `[[package]]` with its `source`. The project itself is the one whose source is
 * `{ editable = "." }` or `{ virtual = "." }` (without one: every editable or virtual package, as in a workspace);
 * its `dependencies`, `optional-dependencies` and `dev-dependencies` name the direct ones, and its
 * `[package.metadata]` keeps the ranges asked for.
 */

const source = (pkg: Table) => record(field(pkg, 'source'));
const isProject = (pkg: Table) => field(source(pkg), 'editable') !== undefined || field(source(pkg), 'virtual') !== undefined;
const isRoot = (pkg: Table) => field(source(pkg), 'editable') === '.' || field(source(pkg), 'virtual') === '.';

/** The ranges the project asked for, by PEP 503 name: `requires-dist` and each group of `requires-dev`. */
function ranges(project: Table): Map<string, string> {
  const metadata = record(field(project, 'metadata'));
  const groups = [field(metadata, 'requires-dist'), ...entries(field(metadata, 'requires-dev')).map(([, group]) => group)];
  const found = new Map<string, string>();
  for (const requirement of groups.flatMap(tables)) {
    const name = text(field(requirement, 'name'));
    const specifier = text(field(requirement, 'specifier'));
    if (name !== undefined && specifier !== undefined) found.set(pep503(name), specifier);
  }
  return found;
}

/** Each dependency a project lists (`{ name, version? }`), with whether it is for development. */
function listed(project: Table): { dep: Table; dev: boolean }[] {
  const group = (deps: unknown, dev: boolean) => tables(deps).map((dep) => ({ dep, dev }));
  return [
    ...group(field(project, 'dependencies'), false),
    ...entries(field(project, 'optional-dependencies')).flatMap(([, deps]) => group(deps, false)),
    ...entries(field(project, 'dev-dependencies')).flatMap(([, deps]) => group(deps, true)),
  ];
}

/** One listed dependency: each version the lockfile has for it (forks by marker have several), if from a registry. */
function readListed(dep: Table, dev: boolean, range: (name: string) => string | undefined, locked: Map<string, Table[]>, out: Collector): void {
  const name = pep503(text(field(dep, 'name')) ?? '');
  const version = text(field(dep, 'version'));
  const found = (locked.get(name) ?? []).filter((pkg) => version === undefined || text(field(pkg, 'version')) === version);
  const asked = range(name);
  const extra = asked === undefined ? {} : { range: asked };
  if (found.length === 0) {
    out.warn(`${name}: not in uv.lock, reported without a version`);
    out.add({ name, version: null, ...extra, dev });
  }
  for (const pkg of found) {
    if (isProject(pkg)) continue; // Another project of the workspace: not a registry's.
    if (field(source(pkg), 'registry') === undefined) out.warn(`${name}: installed from git, a URL or a local folder, not a registry: skipped`);
    else out.add({ name, version: text(field(pkg, 'version')) ?? null, ...extra, dev });
  }
}

export function readUvLock(content: string, out: Collector): void {
  const packages = tables(field(readToml('uv.lock', content), 'package'));
  const roots = packages.filter(isRoot);
  const projects = roots.length > 0 ? roots : packages.filter(isProject);
  if (projects.length === 0) out.warn('uv.lock names no project (a package whose source is editable or virtual): no dependencies read');
  const locked = byPypiName(packages);
  for (const project of projects) {
    const asked = ranges(project);
    for (const { dep, dev } of listed(project)) readListed(dep, dev, (name) => asked.get(name), locked, out);
  }
}
