import type { Library, LibrarySource } from './types.js';

/**
 * How each kind of library is entered and named in the UI. Registries are named by their ecosystem, never by a host:
 * the server reaches them through npm's, pip's and cargo's own configuration.
 */
export type Registry = 'npm' | 'pypi' | 'crates';

export const REGISTRIES: { value: Registry; label: string; placeholder: string }[] = [
  { value: 'npm', label: 'npm (JavaScript, TypeScript)', placeholder: 'fastify or @scope/name' },
  { value: 'pypi', label: 'PyPI (Python)', placeholder: 'requests' },
  { value: 'crates', label: 'crates (Rust)', placeholder: 'tokio' },
];

export const isPackage = (source: LibrarySource): source is Registry => source === 'npm' || source === 'pypi' || source === 'crates';

/** A library's kind in a few words, for its row. */
export function sourceKind(source: LibrarySource): string {
  switch (source) {
    case 'git-host':
      return 'git host';
    case 'local':
      return 'folder';
    case 'website':
      return 'documentation site';
    case 'pypi':
      return 'PyPI package';
    case 'crates':
      return 'crate';
    default:
      return `${source} package`;
  }
}

/** What deleting a library leaves alone. */
export function sourceNoun(source: LibrarySource): string {
  if (source === 'local') return 'folder';
  if (source === 'website') return 'site';
  return isPackage(source) ? 'package' : 'repository';
}

/** Only links a page may follow: a registry's `repository` field can hold anything (git+ssh:, javascript:). */
export function httpUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url.replace(/^git\+/, ''));
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : null;
  } catch {
    return null;
  }
}

/** Intervals a refresh schedule offers (the API takes any `<n>m|h|d`, and `off`). */
export const REFRESH_CHOICES: { value: string; label: string }[] = [
  { value: '', label: "Default (the server's setting)" },
  { value: '30m', label: 'Every 30 minutes' },
  { value: '1h', label: 'Every hour' },
  { value: '6h', label: 'Every 6 hours' },
  { value: '1d', label: 'Every day' },
  { value: '7d', label: 'Every week' },
  { value: 'off', label: 'Never (off)' },
];

/** The choices, with a value set elsewhere (the API, the MCP tool) kept as one more. */
export function refreshChoices(current: string): { value: string; label: string }[] {
  return REFRESH_CHOICES.some((c) => c.value === current) ? REFRESH_CHOICES : [...REFRESH_CHOICES, { value: current, label: `Every ${current}` }];
}

export const POLICY_HINT = 'latest, minors:3 (newest patch of the last 3 minors), majors:2, match:v2.* or none; combine with commas.';

/** The refresh settings in a row: "refresh every 6h · policy minors:3", defaults named as such. */
export function refreshSummary(lib: Library): string {
  const every = lib.refreshEvery === 'off' ? 'refresh off' : `refresh ${lib.refreshEvery ? `every ${lib.refreshEvery}` : 'by default'}`;
  return lib.versionPolicy ? `${every} · versions ${lib.versionPolicy}` : every;
}
