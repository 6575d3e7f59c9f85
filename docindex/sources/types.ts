import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/log.js';
import type { OutboundGuard } from '../../outbound/guard.js';

/**
 * Where a library's files come from. `git-host` and `local` are repositories; `npm`, `pypi` and `crates` are
 * packages of a registry (docindex/sources/registries/); `website` is a documentation site (docindex/sources/website/).
 * Every kind ends the same way: a folder of files that the pipeline selects, parses and swaps in (docindex/pipeline.ts).
 */
export const REGISTRIES = ['npm', 'pypi', 'crates'] as const;
export type Ecosystem = (typeof REGISTRIES)[number];

/** A library's source is a package of a registry (not a repository or a site). */
export const isPackageSource = (source: string): source is Ecosystem => (REGISTRIES as readonly string[]).includes(source);

/** What a source reads with: the outbound guard for every request, the attempt's cancellation, its work folder. */
export interface SourceContext {
  config: Config;
  guard: OutboundGuard;
  log: Logger;
  signal: AbortSignal;
  /** An empty folder of this attempt's own (docs/jobs.md, "Work folders"): downloads and extracted files go here. */
  workdir: string;
  /** A folder of this library's that outlives runs (a site's pages with their validators); absent for a lookup. */
  cacheDir?: string;
  /** Liveness with a few words on what is being read ("12 of 40 pages"). */
  heartbeat(detail: string): void;
}

/** A folder of files to index, and what the source has to say about them. */
export interface Checkout {
  root: string;
  /** The commit (git), or another stamp of what was read (a package's version, a site's fetch time). */
  commit: string | null;
  /** Absolute folders under `root` that are never walked. */
  skip?: string[];
  warnings: string[];
  /** Counts worth reporting (pages fetched, pages not modified, files extracted). */
  counts?: Record<string, number>;
}

/** One published version of a package, as its registry describes it. */
export interface PackageVersion {
  version: string;
  publishedAt: string | null;
  /** Yanked (PyPI, crates) or deprecated (npm): not picked as the latest, not registered by a refresh policy. */
  yanked: boolean;
  /** The package's archive: an npm tarball, a PyPI sdist or wheel, a .crate. */
  archive: { url: string; kind: 'tgz' | 'zip'; sha256?: string; sha512?: string; size?: number } | null;
  /** The repository and the commit (npm's gitHead) or tag the version was published from, when the registry says. */
  repository: { url: string; ref?: string; directory?: string } | null;
}

/** A package as its registry describes it. */
export interface PackageInfo {
  ecosystem: Ecosystem;
  /** The registry's canonical spelling (PyPI names are normalised). */
  name: string;
  description: string | null;
  homepage: string | null;
  /** The newest version that is not yanked nor a pre-release (the registry's `latest` tag when it has one). */
  latest: string;
  versions: PackageVersion[];
}

/** A registry as Gristmill reads it: through the ecosystem's own configuration of where it is. */
export interface Registry {
  ecosystem: Ecosystem;
  /** The package, or null when the registry has none of that name (404). */
  lookup(name: string, ctx: SourceContext): Promise<PackageInfo | null>;
}
