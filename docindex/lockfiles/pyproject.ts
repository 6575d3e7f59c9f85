import { type Collector, pep503, quote } from './collect.js';
import { parseRequirement } from './pep508.js';
import { entries, field, groupBy, list, readToml, record, type Table, text } from './read.js';
import type { Wanted } from './types.js';

/**
 * pyproject.toml's dependencies: PEP 621's `[project]` lists (PEP 508 strings), PEP 735's `[dependency-groups]`
 * and uv's `[tool.uv] dev-dependencies` (development), and Poetry's `[tool.poetry.dependencies]`,
 * `dev-dependencies` and `[tool.poetry.group.<name>.dependencies]` (groups other than main are for development).
 * Names are PEP 503-normalised, so they match a lockfile's.
 */

function fromRequirement(value: unknown, dev: boolean, out: Collector): Wanted[] {
  const line = text(value);
  if (line === undefined) return []; // A group's `{ include-group = "..." }` adds nothing of its own.
  const requirement = parseRequirement(line);
  if (requirement === null) out.warn(`${quote(line)} is not a requirement, skipped`);
  else if (requirement.url) out.warn(`${requirement.name} is required from a URL, skipped`);
  else {
    const { name, specifier, exact } = requirement;
    return [{ name: pep503(name), ...(specifier !== undefined && { range: specifier }), ...(exact !== undefined && { exact }), dev }];
  }
  return [];
}

// Poetry's constraints: `2.31.0` and `==2.31.0` pin one version; `^2.31`, `~2.31`, `>=2,<3`, `*` allow more.
const POETRY_EXACT = /^(?:==?)?\s*([0-9][A-Za-z0-9.+!_-]*)$/;

function fromPoetry(name: string, value: unknown, dev: boolean, out: Collector): Wanted[] {
  if (name.toLowerCase() === 'python') return [];
  const detailed = record(value);
  if (detailed && ['git', 'path', 'url'].some((source) => field(detailed, source) !== undefined)) {
    out.warn(`${name}: comes from git, a URL or a local folder, not a registry: skipped`);
    return [];
  }
  const range = text(detailed ? field(detailed, 'version') : value)?.trim();
  const exact = range === undefined ? undefined : POETRY_EXACT.exec(range)?.[1];
  return [{ name: pep503(name), ...(range !== undefined && { range }), ...(exact !== undefined && { exact }), dev }];
}

function poetryWanted(poetry: Table | undefined, out: Collector): Wanted[] {
  const section = (deps: unknown, dev: boolean) => entries(deps).flatMap(([name, value]) => fromPoetry(name, value, dev, out));
  const groups = entries(field(poetry, 'group')).flatMap(([group, table]) => section(field(record(table), 'dependencies'), group !== 'main'));
  return [...section(field(poetry, 'dependencies'), false), ...section(field(poetry, 'dev-dependencies'), true), ...groups];
}

export function pyprojectWanted(content: string, out: Collector): Wanted[] {
  const pyproject = readToml('pyproject.toml', content);
  const project = record(field(pyproject, 'project'));
  const tool = record(field(pyproject, 'tool'));
  const requirements = (items: unknown, dev: boolean) => list(items).flatMap((item) => fromRequirement(item, dev, out));
  return [
    ...requirements(field(project, 'dependencies'), false),
    ...entries(field(project, 'optional-dependencies')).flatMap(([, items]) => requirements(items, false)),
    ...poetryWanted(record(field(tool, 'poetry')), out),
    ...entries(field(pyproject, 'dependency-groups')).flatMap(([, items]) => requirements(items, true)),
    ...requirements(field(record(field(tool, 'uv')), 'dev-dependencies'), true),
  ];
}

/** pyproject.toml on its own: ranges, and the version where a range pins one. */
export function readPyproject(content: string, out: Collector): void {
  for (const { name, range, exact, dev } of pyprojectWanted(content, out)) {
    out.add({ name, version: exact ?? null, ...(range !== undefined && { range }), dev });
  }
}

/** A lockfile's `[[package]]` tables by their PEP 503 name. */
export function byPypiName(packages: Table[]): Map<string, Table[]> {
  return groupBy(packages, (pkg) => {
    const name = text(field(pkg, 'name'));
    return name === undefined ? undefined : pep503(name);
  });
}
