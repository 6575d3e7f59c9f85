import semver, { type SemVer } from 'semver';
import { ValidationError } from '../../core/errors.js';

/**
 * Which versions of a library a refresh registers, as a person types it (INDEX_VERSION_POLICY, or a library's own):
 *
 * - `none`: no versions, only the default branch (or the package's latest) stays fresh;
 * - `latest`: the newest release;
 * - `minors:N`: the newest patch of each of the last N minor lines (`1.4.2`, `1.3.9`, `1.2.7`);
 * - `majors:N`: the newest release of each of the last N majors;
 * - `match:<glob>` or `match:/<regex>/`: every tag or version that matches, pre-releases and yanked ones included
 *   (`match:v2.*`, `match:/^release-\d+$/`);
 *
 * combined with `,` (`minors:3,match:lts-*`). Releases are versions semver reads, a leading `v` allowed (`v1.2.3`;
 * `1.2` is `1.2.0`); pre-releases, yanked versions and anything semver cannot read are picked only by a `match:`.
 */
export type PolicyTerm = { kind: 'latest' } | { kind: 'minors' | 'majors'; count: number } | { kind: 'match'; pattern: RegExp; text: string };

export interface VersionPolicy {
  /** Empty for `none`. */
  terms: PolicyTerm[];
  /** The policy as typed, normalised (spaces dropped). */
  text: string;
}

export interface AvailableVersion {
  /** The tag or version as the source spells it; what is picked. */
  version: string;
  yanked: boolean;
  publishedAt: string | null;
}

/** More than this many lines back is rarely meant, and would index a library's whole history. */
const MAX_COUNT = 50;
const MAX_PATTERN = 200;
/** Longer tags are never matched: a pattern never runs on input an attacker made long. */
const MAX_TAG = 128;

const invalid = (text: string, why: string) =>
  new ValidationError(`"${text}" is not a version policy: ${why} (none, latest, minors:N, majors:N, match:<glob or /regex/>, combined with ",")`, 'INVALID_VERSION_POLICY');

/** A glob's `*` is any run of characters and `?` one; everything else is literal. The whole tag must match. */
function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

function matchTerm(text: string, pattern: string): PolicyTerm {
  if (!pattern) throw invalid(text, 'match: needs a pattern');
  if (pattern.length > MAX_PATTERN) throw invalid(text, `a pattern is at most ${MAX_PATTERN} characters`);
  const regex = /^\/(.+)\/(i?)$/.exec(pattern);
  if (!regex) return { kind: 'match', pattern: globToRegExp(pattern), text: pattern };
  try {
    return { kind: 'match', pattern: new RegExp(regex[1]!, regex[2]), text: pattern };
  } catch (err) {
    throw invalid(text, (err as Error).message);
  }
}

function parseTerm(text: string, term: string): PolicyTerm {
  if (term === 'latest') return { kind: 'latest' };
  const lines = /^(minors|majors):(\d+)$/.exec(term);
  if (lines) {
    const count = Number(lines[2]);
    if (count < 1 || count > MAX_COUNT) throw invalid(text, `${lines[1]} takes 1 to ${MAX_COUNT}`);
    return { kind: lines[1] as 'minors' | 'majors', count };
  }
  if (term.startsWith('match:')) return matchTerm(text, term.slice('match:'.length));
  throw invalid(text, `"${term}" is not a term`);
}

/** Splits at commas, except inside a `match:/regex/` (a regex may hold commas: `/^v\d{1,2}$/`). */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  const term = /\s*(match:\/(?:\\.|[^/\\])*\/i?|[^,]*?)\s*(?:,|$)/y;
  while (term.lastIndex < text.length) {
    const start = term.lastIndex;
    const m = term.exec(text);
    if (!m || term.lastIndex === start) throw invalid(text, 'cannot be read');
    terms.push(m[1]!);
  }
  return terms;
}

/** Reads a policy; a ValidationError (`INVALID_VERSION_POLICY`) says what is wrong with it. */
export function parsePolicy(input: string): VersionPolicy {
  const text = input.trim();
  if (!text) throw invalid(input, 'it is empty');
  if (text.endsWith(',')) throw invalid(text, 'a term is empty');
  const parts = splitTerms(text);
  if (parts.some((p) => !p)) throw invalid(text, 'a term is empty');
  if (parts.includes('none')) {
    if (parts.length > 1) throw invalid(text, '"none" goes alone');
    return { terms: [], text: 'none' };
  }
  return { terms: parts.map((p) => parseTerm(text, p)), text: parts.join(',') };
}

/** A version as semver reads it (`v1.2.3`, `1.2` as `1.2.0`), or null. */
export function semverOf(version: string): SemVer | null {
  const clean = semver.parse(version.replace(/^[vV](?=\d)/, ''));
  if (clean) return clean;
  const short = /^[vV]?(\d+)\.(\d+)$/.exec(version);
  return short ? semver.parse(`${short[1]}.${short[2]}.0`) : null;
}

interface Candidate extends AvailableVersion {
  semver: SemVer | null;
}

/** Newest first: by semver, then (for what semver cannot read) by publication, then by name. */
function newestFirst(a: Candidate, b: Candidate): number {
  if (a.semver && b.semver) return semver.rcompare(a.semver, b.semver) || a.version.localeCompare(b.version);
  if (a.semver || b.semver) return a.semver ? -1 : 1;
  return (b.publishedAt ?? '').localeCompare(a.publishedAt ?? '') || a.version.localeCompare(b.version);
}

/** The newest release of each of the last `count` lines (a line: what `lineOf` gives). */
function newestOfLines(releases: Candidate[], count: number, lineOf: (v: SemVer) => string): Candidate[] {
  const seen = new Set<string>();
  const picked: Candidate[] = [];
  for (const r of releases) {
    const line = lineOf(r.semver!);
    if (seen.has(line)) continue;
    seen.add(line);
    picked.push(r);
    if (picked.length === count) break;
  }
  return picked;
}

function pickTerm(term: PolicyTerm, all: Candidate[], releases: Candidate[]): Candidate[] {
  switch (term.kind) {
    case 'latest':
      return releases.slice(0, 1);
    case 'minors':
      return newestOfLines(releases, term.count, (v) => `${v.major}.${v.minor}`);
    case 'majors':
      return newestOfLines(releases, term.count, (v) => `${v.major}`);
    case 'match':
      return all.filter((c) => term.pattern.test(c.version));
  }
}

/** The versions `policy` wants out of `available`, newest first, each once. Pure: the caller registers them. */
export function pickVersions(policy: VersionPolicy, available: readonly AvailableVersion[]): string[] {
  const all = available
    .filter((v) => v.version.length > 0 && v.version.length <= MAX_TAG)
    .map((v) => ({ ...v, semver: semverOf(v.version) }))
    .sort(newestFirst);
  const releases = all.filter((c) => c.semver && !c.semver.prerelease.length && !c.yanked);
  const picked = new Set(policy.terms.flatMap((t) => pickTerm(t, all, releases)));
  return all.filter((c) => picked.has(c)).map((c) => c.version);
}
