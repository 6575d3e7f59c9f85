/** What a lockfile or manifest says about a project's direct dependencies (issue 22, "Versions from a project"). */

/** The formats read, named by their usual file name. */
export type LockfileFormat =
  | 'package-lock.json'
  | 'pnpm-lock.yaml'
  | 'yarn.lock'
  | 'package.json'
  | 'requirements.txt'
  | 'poetry.lock'
  | 'uv.lock'
  | 'pyproject.toml'
  | 'Cargo.lock'
  | 'Cargo.toml';

export type Ecosystem = 'npm' | 'pypi' | 'crates';

export interface LockedDependency {
  /** npm names as written (scoped kept), PyPI names normalised per PEP 503, crate names as written. */
  name: string;
  /** The exact version installed or pinned; null when only a range is known. */
  version: string | null;
  /** The range the project asked for, when the file records it. */
  range?: string;
  dev: boolean;
}

export interface LockfileResult {
  format: LockfileFormat;
  ecosystem: Ecosystem;
  /** Deduplicated; production ones before development ones, each part sorted by name then version. */
  dependencies: LockedDependency[];
  /** What was skipped or guessed, in words a user can act on. Never the value of an index URL or a git URL. */
  warnings: string[];
}

export interface LockfileInput {
  /** The file's name or path; its base name picks the format (case-insensitive). Without one the content is sniffed. */
  fileName?: string;
  content: string;
  /**
   * The project's manifest, for lockfiles that do not say which packages are direct or which are for development:
   * package.json beside yarn.lock or a lockfileVersion 1 package-lock.json, pyproject.toml beside poetry.lock,
   * Cargo.toml beside Cargo.lock.
   */
  manifest?: string;
}

export const ECOSYSTEM: Record<LockfileFormat, Ecosystem> = {
  'package-lock.json': 'npm',
  'pnpm-lock.yaml': 'npm',
  'yarn.lock': 'npm',
  'package.json': 'npm',
  'requirements.txt': 'pypi',
  'poetry.lock': 'pypi',
  'uv.lock': 'pypi',
  'pyproject.toml': 'pypi',
  'Cargo.lock': 'crates',
  'Cargo.toml': 'crates',
};

/** A dependency a manifest asks for: the name as its registry knows it, its range, and whether it is for development. */
export interface Wanted {
  name: string;
  range?: string;
  /** The one version the range allows, when it pins one. */
  exact?: string;
  dev: boolean;
}

export const LIMITS = {
  /** Bytes of a lockfile or a manifest. */
  maxBytes: 10 * 1024 * 1024,
  /** Dependencies in one answer. */
  maxDependencies: 20_000,
  /** Warnings kept; the rest are counted in a last one. */
  maxWarnings: 50,
  /** YAML aliases resolved in one document: lockfiles written by tools use none, an alias bomb uses many. */
  maxYamlAliases: 100,
  /** Nesting depth of TOML inline tables and arrays; lockfiles use three or four. */
  maxTomlDepth: 50,
};
