import semver from 'semver';
import { PayloadTooLargeError } from '../../core/errors.js';
import { type Ecosystem, LIMITS, type LockedDependency, type LockfileFormat, type LockfileResult } from './types.js';

// Package names as each registry accepts them: npm's rule for new and legacy names (uppercase was once allowed),
// PEP 508's for PyPI, and the crates registry's (a letter first, at most 64 characters).
const NPM_NAME = /^(?:@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*$/i;
const PYPI_NAME = /^(?:[a-z0-9]|[a-z0-9][a-z0-9._-]*[a-z0-9])$/i;
const CRATE_NAME = /^[a-z][a-z0-9_-]{0,63}$/i;
// PEP 440 versions, loosely: their characters only (the index is the judge of the rest).
const PYPI_VERSION = /^[a-z0-9][a-z0-9.+!_-]{0,99}$/i;

/** A value from the file, short and quoted, for a warning. */
export function quote(value: string, max = 80): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}...` : value);
}

/** PEP 503: runs of `-`, `_` and `.` become one `-`, lowercased. */
export function pep503(name: string): string {
  return name.replace(/[-_.]+/g, '-').toLowerCase();
}

/** The name as the ecosystem's registry spells it, or null when it is not a valid package name there. */
export function packageName(ecosystem: Ecosystem, name: string): string | null {
  if (ecosystem === 'npm') return name.length <= 214 && NPM_NAME.test(name) ? name : null;
  if (ecosystem === 'pypi') return name.length <= 200 && PYPI_NAME.test(name) ? pep503(name) : null;
  return CRATE_NAME.test(name) ? name : null;
}

function exactVersion(ecosystem: Ecosystem, version: string): string | null {
  if (ecosystem === 'pypi') return PYPI_VERSION.test(version) ? version : null;
  return version.length <= 256 ? semver.valid(version) : null;
}

const order = (a: LockedDependency, b: LockedDependency) =>
  Number(a.dev) - Number(b.dev) || compare(a.name, b.name) || compare(a.version ?? '', b.version ?? '');
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Gathers what a format's reader finds: checks names and versions against the ecosystem's rules (a hostile file's
 * `__proto__` or `../x` never reaches a caller), enforces the limits, and gives the result deduplicated and sorted.
 */
export class Collector {
  private readonly deps: LockedDependency[] = [];
  private readonly warnings: string[] = [];
  private warningsDropped = 0;

  constructor(readonly ecosystem: Ecosystem) {}

  add(dep: LockedDependency): void {
    const name = packageName(this.ecosystem, dep.name);
    if (name === null) {
      this.warn(`${quote(dep.name)} is not a valid ${this.ecosystem} package name: skipped`);
      return;
    }
    let version = dep.version;
    if (version !== null && (version = exactVersion(this.ecosystem, version)) === null) {
      this.warn(`${name}: version ${quote(dep.version ?? '')} is not a ${this.ecosystem} version: reported without one`);
    }
    if (this.deps.length >= LIMITS.maxDependencies) {
      throw new PayloadTooLargeError(`The file lists more than ${LIMITS.maxDependencies} dependencies`, 'LOCKFILE_TOO_LARGE');
    }
    this.deps.push({ name, version, ...(dep.range !== undefined && { range: dep.range }), dev: dep.dev });
  }

  warn(message: string): void {
    if (this.warnings.length < LIMITS.maxWarnings) this.warnings.push(message);
    else this.warningsDropped += 1;
  }

  result(format: LockfileFormat): LockfileResult {
    // One entry per name and version; one listed for production wins over the same one listed for development.
    const byKey = new Map<string, LockedDependency>();
    for (const dep of this.deps) {
      const key = `${dep.name}\n${dep.version ?? ''}`;
      const seen = byKey.get(key);
      if (!seen) byKey.set(key, dep);
      else if (seen.dev && !dep.dev) byKey.set(key, dep);
    }
    const warnings = this.warningsDropped > 0 ? [...this.warnings, `${this.warningsDropped} more warnings`] : [...this.warnings];
    return { format, ecosystem: this.ecosystem, dependencies: [...byKey.values()].sort(order), warnings };
  }
}
