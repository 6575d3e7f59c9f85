import semver from 'semver';
import type { PackageVersion } from '../types.js';

/**
 * Ordering versions and picking the latest: semver for npm and crates, PEP 440 for PyPI (a small comparator of
 * epoch, release, pre-, post- and dev-releases; local labels do not order). A version its scheme cannot read sorts
 * below every other and is never the latest while another is there.
 */
export interface VersionScheme {
  compare(a: string, b: string): number;
  prerelease(v: string): boolean;
}

export const SEMVER: VersionScheme = {
  compare: (a, b) => {
    const va = semver.valid(a);
    const vb = semver.valid(b);
    if (va && vb) return semver.compare(va, vb);
    return (va ? 1 : 0) - (vb ? 1 : 0);
  },
  prerelease: (v) => !semver.valid(v) || semver.prerelease(v) !== null,
};

interface Pep440 {
  epoch: number;
  release: number[];
  /** 0 alpha, 1 beta, 2 release candidate, and its number. */
  pre: [number, number] | null;
  post: number | null;
  dev: number | null;
}

const PEP440 =
  /^\s*v?(?:(\d+)!)?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d+)?)?(?:-(\d+)|[-_.]?(post|rev|r)[-_.]?(\d+)?)?(?:[-_.]?(dev)[-_.]?(\d+)?)?(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?\s*$/i;

const PRE_KIND: Record<string, number> = { a: 0, alpha: 0, b: 1, beta: 1, c: 2, rc: 2, pre: 2, preview: 2 };

export function parsePep440(v: string): Pep440 | null {
  const m = PEP440.exec(v);
  if (!m) return null;
  return {
    epoch: Number(m[1] ?? 0),
    release: m[2]!.split('.').map(Number),
    pre: m[3] ? [PRE_KIND[m[3].toLowerCase()]!, Number(m[4] ?? 0)] : null,
    post: m[5] !== undefined || m[6] ? Number(m[5] ?? m[7] ?? 0) : null,
    dev: m[8] ? Number(m[9] ?? 0) : null,
  };
}

const cmp = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);

/** packaging's order: a dev-only release before its pre-releases, pre before final, final before post; dev last within each. */
function key(p: Pep440): number[] {
  const release = [...p.release];
  while (release.length > 1 && release[release.length - 1] === 0) release.pop();
  const pre = p.pre ? p.pre : p.post === null && p.dev !== null ? [-1, 0] : [3, 0];
  return [p.epoch, ...release.map((n) => n), -2, ...pre, p.post ?? -1, p.dev ?? Infinity];
}

export function comparePep440(a: string, b: string): number {
  const pa = parsePep440(a);
  const pb = parsePep440(b);
  if (!pa || !pb) return (pa ? 1 : 0) - (pb ? 1 : 0);
  const ka = key(pa);
  const kb = key(pb);
  for (let i = 0; i < Math.max(ka.length, kb.length); i++) {
    // a shorter release is padded with zeros; the -2 marker ends it, and a release number is never negative
    const c = cmp(ka[i] ?? 0, kb[i] ?? 0);
    if (c) return c;
  }
  return 0;
}

export const PEP440_SCHEME: VersionScheme = {
  compare: comparePep440,
  prerelease: (v) => {
    const p = parsePep440(v);
    return !p || p.pre !== null || p.dev !== null;
  },
};

/** The newest version that is neither yanked nor a pre-release; failing that the newest not yanked; failing that the newest. */
export function latestVersion(versions: PackageVersion[], scheme: VersionScheme): string | null {
  const newest = (list: PackageVersion[]) => list.reduce<string | null>((best, v) => (best === null || scheme.compare(v.version, best) > 0 ? v.version : best), null);
  const live = versions.filter((v) => !v.yanked);
  return newest(live.filter((v) => !scheme.prerelease(v.version))) ?? newest(live) ?? newest(versions);
}

/** Oldest first, as the schemes order them. */
export const sortVersions = (versions: PackageVersion[], scheme: VersionScheme) => versions.sort((a, b) => scheme.compare(a.version, b.version));
