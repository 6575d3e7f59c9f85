import { normalizeConfigPath, type RepoConfig } from './config.js';
import { detectKind } from './languages.js';

/**
 * Which files of a repository get indexed. Paths are repo-relative with '/' separators. The rules, in the order in
 * which they are checked (the first that matches gives the reason):
 *
 * 1. Never indexed: anything inside .git/, node_modules/, vendor/, dist/, build/, target/, .next/ and the other
 *    folders in ALWAYS_SKIPPED_DIRS, inside any hidden folder (name starting with '.'), hidden files, lock files.
 * 2. Only indexable kinds: detectKind(path) !== null (.md .mdx .markdown .rst .txt .ipynb and source code).
 * 3. Generated files recognisable by name: minified and bundled JS, protobuf/gRPC output, *.generated.*, ...,
 *    and .txt files that are not prose (requirements*.txt, CMakeLists.txt, robots.txt, ...).
 * 4. `excludeFolders` (always beats `folders`): an entry without '/' matches a folder of that name at any depth;
 *    an entry with '/' matches the folder at that path from the root. `*` matches within a segment, `**` across.
 * 5. `excludeFiles`: a plain file name matches at any depth; a glob without '/' matches the file name; a glob
 *    with '/' matches a prefix of the path ending at a segment boundary (`docs/legacy*` matches docs/legacy.md
 *    and docs/legacy/x.md); anything else is an exact path (or a folder path, whose files it then matches).
 * 6. `folders`, when not empty: only files under one of them (path prefix from the root, `*` globs allowed), plus
 *    Markdown and reStructuredText files at the repository root, which are always included.
 * 7. Context7's default excludes: CHANGELOG, LICENSE and CODE_OF_CONDUCT documents (any case, any doc extension);
 *    folders whose name contains archive, deprecated, legacy, previous, outdated or superseded, or is `old`;
 *    translated docs: a locale folder under i18n/, l10n/, translations/ or locales/; a known non-English language
 *    code (`fr`, `zh`, `pt-br`, ...) as a folder directly under a docs-like folder (docs, doc, documentation,
 *    website, site, content, pages, guide(s), manual, book, wiki); a language-region folder such as `zh-cn`,
 *    `zh_TW`, `pt-BR` anywhere; translated file names like README.zh-CN.md, README_ja.md, intro.fr.md.
 *    A folder named in `folders` is the user's explicit choice: the default folder rules do not apply to the path
 *    segments that entry spells out (folders: ["docs/legacy"] indexes docs/legacy, but not docs/legacy/old).
 * 8. Gristmill's default excludes, so that a repository's own tests do not answer questions about it: test,
 *    fixture, snapshot and mock folders (test/, tests/, __tests__/, fixtures/, testdata/, __snapshots__/, __mocks__/,
 *    ...), test files (*.test.*, *.spec.*, *_test.go, test_*.py, *Test.java, ...), and generated declarations
 *    (*-configuration.d.ts). Two more need the file itself and are checked as it is read (contentExclusion):
 *    declaration files over 100 KB and source files whose header says they are generated.
 *
 * `includeFiles` (same patterns as `excludeFiles`) is the way back in: a file it matches is exempt from the default
 * excludes (3, 7, 8 and contentExclusion), never from 1, 2, 4, 5 or 6.
 */
export interface FileSelection {
  included: string[];
  excluded: { path: string; reason: string }[];
}

export const ALWAYS_SKIPPED_DIRS: ReadonlySet<string> = new Set([
  'node_modules',
  'vendor',
  'dist',
  'build',
  'target',
  'bower_components',
  'jspm_packages',
  '__pycache__',
  'site-packages',
  'coverage',
  '_build',
  'venv',
]);

const LOCK_FILES = /^(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|deno\.lock|cargo\.lock|gemfile\.lock|poetry\.lock|pipfile\.lock|uv\.lock|pdm\.lock|composer\.lock|go\.sum|mix\.lock|pubspec\.lock|packages\.lock\.json|flake\.lock|[\w.-]+\.lock)$/i;

const GENERATED: readonly [RegExp, string][] = [
  [/[.-]min\.(?:js|mjs|cjs|css)$/i, 'minified file'],
  [/[.-]bundle\.(?:js|mjs|cjs)$|\.chunk\.js$/i, 'bundled file'],
  [/\.pb(?:\.gw)?\.go$|_pb2(?:_grpc)?\.pyi?$|\.pb\.(?:cc|h)$|_(?:grpc_)?pb\.(?:js|ts)$|\.pb\.(?:swift|rs)$/i, 'generated protobuf code'],
  [/\.generated\.\w+$|\.gen\.(?:go|ts|js)$|_generated\.go$|^zz_generated|\.g\.dart$|\.freezed\.dart$|\.designer\.cs$|^generated_/i, 'generated file'],
];

const NOT_PROSE_TXT = /^(?:requirements(?:[-_.][\w.-]*)?\.txt|constraints(?:[-_.][\w.-]*)?\.txt|dev-requirements\.txt|cmakelists\.txt|robots\.txt|humans\.txt|ads\.txt|security\.txt|third[-_]party[-_]notices\.txt|notice\.txt|copying(?:\.lesser)?\.txt|authors\.txt|contributors\.txt|version\.txt|llms(?:-full)?\.txt)$/i;

const DOC_EXT = '(?:md|mdx|markdown|rst|txt)';
const DEFAULT_EXCLUDED_FILES: readonly [RegExp, string][] = [
  [new RegExp(`^changelog\\.${DOC_EXT}$`, 'i'), 'changelog'],
  [new RegExp(`^licen[cs]e\\.${DOC_EXT}$`, 'i'), 'license'],
  [new RegExp(`^code[-_]of[-_]conduct\\.${DOC_EXT}$`, 'i'), 'code of conduct'],
];
const DEFAULT_EXCLUDED_FOLDER = /archive|deprecated|legacy|previous|outdated|superseded/i;

const TEST_FOLDERS: ReadonlySet<string> = new Set([
  'test',
  'tests',
  '__tests__',
  '__test__',
  'testdata',
  'test-data',
  'test_data',
  'fixtures',
  'fixture',
  '__fixtures__',
  '__snapshots__',
  '__mocks__',
]);
const TEST_FILE = /\.(?:test|spec)\.[\w]+$|_test\.(?:go|py)$|^test_[\w-]*\.py$|_spec\.rb$|Tests?\.(?:java|kt|cs|scala)$|\.snap$/;
const GENERATED_DECLARATION = /-configuration\.d\.[mc]?ts$/i;
const DECLARATION = /\.d\.[mc]?ts$/i;
/** Declaration files larger than this are generated (a runtime's or an API's whole surface), not written for readers. */
export const DECLARATION_MAX_BYTES = 100_000;
/** A header comment saying the file is generated (protoc, Go's convention, `@generated`, wrangler, openapi tools). */
const GENERATED_HEADER =
  /^[ \t]*(?:\/\/|#|\/\*+|\*|<!--|--|;)[ \t]*(?:(?:auto-?)?generated (?:by|with|from)\b|.*(?:@generated\b|\bDO NOT EDIT\b|\bauto-?generated\b|\bautomatically generated\b|\b(?:this|the) file (?:is|was|has been) generated\b))/im;

/** ISO 639-1 codes of the languages docs are commonly translated into (English is never treated as a translation). */
const LANGS = 'ar|bg|bn|ca|cs|da|de|el|es|et|fa|fi|fr|he|hi|hr|hu|id|it|ja|ko|lt|lv|ms|nb|nl|no|pl|pt|ro|ru|sk|sl|sr|sv|ta|th|tr|uk|ur|vi|zh';
const LOCALE_SEGMENT = /^[a-z]{2,3}(?:[-_][a-z0-9]{2,8})?$/i;
const BARE_LANG = new RegExp(`^(?:${LANGS})$`, 'i');
const LANG_REGION = new RegExp(`^(?:${LANGS})[-_](?:[a-z]{2}|hans|hant|latn|cyrl|\\d{3})$`, 'i');
const TRANSLATION_ROOTS = new Set(['i18n', 'l10n', 'translations', 'locales']);
const DOCS_LIKE = new Set(['docs', 'doc', 'documentation', 'website', 'site', 'content', 'pages', 'guide', 'guides', 'manual', 'book', 'wiki']);
const TRANSLATED_FILE = [
  new RegExp(`\\.(?:${LANGS})(?:[-_][a-z0-9]{2,4})?\\.${DOC_EXT}$`, 'i'),
  new RegExp(`^readme[-_](?:${LANGS})(?:[-_][a-z0-9]{2,4})?\\.${DOC_EXT}$`, 'i'),
  new RegExp(`[-_](?:${LANGS})[-_](?:cn|tw|hk|sg|br|pt|mx|hans|hant)\\.${DOC_EXT}$`, 'i'),
];

interface Matcher {
  pattern: string;
  test: (path: string, dirs: readonly string[], name: string) => boolean;
}

/**
 * Glob matching without regular expressions (a repository's config file must not be able to make matching
 * exponential): `*` and `?` within one path segment, `**` as a whole segment for any number of segments.
 */
function matchSegment(pattern: string, text: string): boolean {
  // The classic two-pointer wildcard match: O(pattern * text) at worst, no recursion.
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    const c = pattern[p];
    if (c !== undefined && c !== '*' && (c === '?' || c === text[t])) {
      p++;
      t++;
    } else if (c === '*') {
      star = p++;
      mark = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++mark;
    } else return false;
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/** Whether the pattern's segments match all of `segments` or, when `prefix`, a leading part of them. */
function matchSegments(pattern: readonly string[], segments: readonly string[], prefix: boolean): boolean {
  const memo = new Uint8Array((pattern.length + 1) * (segments.length + 1)); // 0 unknown, 1 no, 2 yes
  const go = (i: number, j: number): boolean => {
    const key = i * (segments.length + 1) + j;
    if (memo[key]) return memo[key] === 2;
    let ok: boolean;
    if (i === pattern.length) ok = prefix || j === segments.length;
    else if (pattern[i] === '**') ok = go(i + 1, j) || (j < segments.length && go(i, j + 1));
    else ok = j < segments.length && matchSegment(pattern[i]!, segments[j]!) && go(i + 1, j + 1);
    memo[key] = ok ? 2 : 1;
    return ok;
  };
  return go(0, 0);
}

function splitPattern(pattern: string): string[] {
  return pattern.replace(/\*{3,}/g, '**').split('/');
}

function folderMatcher(raw: string): Matcher | null {
  const pattern = normalizeConfigPath(raw);
  if (!pattern) return null;
  if (!pattern.includes('/')) return { pattern, test: (_p, dirs) => dirs.some((d) => matchSegment(pattern, d)) };
  const segs = splitPattern(pattern);
  return { pattern, test: (_p, dirs) => matchSegments(segs, dirs, true) };
}

/** For `folders`: a path prefix from the root; also reports how many leading segments the entry spells out. */
function includeMatcher(raw: string): (Matcher & { depth: number }) | null {
  const pattern = normalizeConfigPath(raw);
  if (!pattern) return null;
  const segs = splitPattern(pattern);
  return { pattern, depth: segs.length, test: (_p, dirs) => dirs.length > 0 && matchSegments(segs, dirs, true) };
}

function fileMatcher(raw: string): Matcher | null {
  const pattern = normalizeConfigPath(raw);
  if (!pattern) return null;
  const glob = /[*?]/.test(pattern);
  if (!pattern.includes('/')) {
    if (!glob) return { pattern, test: (_p, _d, name) => name === pattern };
    return { pattern, test: (_p, _d, name) => matchSegment(pattern, name) };
  }
  if (glob) {
    const segs = splitPattern(pattern);
    return { pattern, test: (p) => matchSegments(segs, p.split('/'), true) };
  }
  return { pattern, test: (p) => p === pattern || p.startsWith(`${pattern}/`) };
}

interface Matchers {
  excludeFolders: Matcher[];
  excludeFiles: Matcher[];
  includeFiles: Matcher[];
  folders: (Matcher & { depth: number })[];
}

function matchers(config: RepoConfig): Matchers {
  const files = (list: string[] | undefined) => (list ?? []).map(fileMatcher).filter((m): m is Matcher => m !== null);
  return {
    excludeFolders: (config?.excludeFolders ?? []).map(folderMatcher).filter((m): m is Matcher => m !== null),
    excludeFiles: files(config?.excludeFiles),
    includeFiles: files(config?.includeFiles),
    folders: (config?.folders ?? []).map(includeMatcher).filter((m): m is Matcher & { depth: number } => m !== null),
  };
}

export function selectFiles(paths: readonly string[], config: RepoConfig): FileSelection {
  const m = matchers(config);

  const included: string[] = [];
  const excluded: { path: string; reason: string }[] = [];
  const seen = new Set<string>();
  for (const original of paths) {
    if (typeof original !== 'string' || seen.has(original)) continue;
    seen.add(original);
    const reason = exclusionReason(original, m);
    if (reason === null) included.push(original);
    else excluded.push({ path: original, reason });
  }
  included.sort(compare);
  excluded.sort((a, b) => compare(a.path, b.path));
  return { included, excluded };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Rules that need the file itself, checked by the crawler as it reads a file selectFiles included: declaration files
 * over DECLARATION_MAX_BYTES, and source files whose first lines say they are generated. `includeFiles` exempts a
 * file, as it does from the other default excludes.
 */
export function contentExclusion(path: string, size: number, head: string, config: RepoConfig): string | null {
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (!DECLARATION.test(name) && detectKind(path) !== 'source') return null;
  const { includeFiles } = matchers(config);
  if (includeFiles.some((m) => m.test(path, path.split('/').slice(0, -1), name))) return null;
  if (DECLARATION.test(name) && size > DECLARATION_MAX_BYTES) return `default exclude: declaration file over ${DECLARATION_MAX_BYTES / 1000} KB`;
  const firstLines = head.slice(0, 2000).split('\n', 10).join('\n');
  if (GENERATED_HEADER.test(firstLines)) return 'default exclude: generated (says so in its header)';
  return null;
}

function exclusionReason(original: string, { excludeFolders, excludeFiles, includeFiles, folders }: Matchers): string | null {
  const path = original.replace(/\\/g, '/').replace(/^(?:\.\/)+/, '').replace(/^\/+/, '');
  if (!path || path.endsWith('/')) return 'not a file path';
  const segments = path.split('/');
  const name = segments[segments.length - 1]!;
  const dirs = segments.slice(0, -1);
  if (segments.some((s) => s === '..' || s === '')) return 'not a repo-relative path';

  for (const d of dirs) {
    if (ALWAYS_SKIPPED_DIRS.has(d)) return `inside ${d}/`;
    if (d.startsWith('.')) return `inside hidden folder ${d}/`;
  }
  if (name.startsWith('.')) return 'hidden file';
  if (LOCK_FILES.test(name)) return 'lock file';
  const kind = detectKind(path);
  if (kind === null) return 'not a documentation or source file';
  const forced = includeFiles.some((m) => m.test(path, dirs, name));
  if (!forced) for (const [re, reason] of GENERATED) if (re.test(name)) return reason;
  if (kind === 'text' && NOT_PROSE_TXT.test(name)) return 'not documentation';

  for (const m of excludeFolders) if (m.test(path, dirs, name)) return `excludeFolders: ${m.pattern}`;
  for (const m of excludeFiles) if (m.test(path, dirs, name)) return `excludeFiles: ${m.pattern}`;

  // Segments spelled out by a matching `folders` entry are exempt from the default folder rules.
  let exempt = 0;
  if (folders.length) {
    const rootDoc = dirs.length === 0 && (kind === 'markdown' || kind === 'rst');
    const hit = folders.filter((m) => m.test(path, dirs, name));
    if (!hit.length && !rootDoc) return 'not under folders';
    for (const m of hit) exempt = Math.max(exempt, Math.min(m.depth, dirs.length));
  }

  if (forced) return null;
  for (const [re, what] of DEFAULT_EXCLUDED_FILES) if (re.test(name)) return `default exclude: ${what}`;
  for (let k = exempt; k < dirs.length; k++) {
    const d = dirs[k]!;
    if (d.toLowerCase() === 'old' || DEFAULT_EXCLUDED_FOLDER.test(d)) return `default exclude: folder ${d}/`;
  }
  for (let k = exempt; k < dirs.length; k++) {
    const d = dirs[k]!;
    const parent = k > 0 ? dirs[k - 1]!.toLowerCase() : '';
    if (TRANSLATION_ROOTS.has(parent) && LOCALE_SEGMENT.test(d) && !/^en(?:[-_]|$)/i.test(d)) return `default exclude: translated docs (${d}/)`;
    if (LANG_REGION.test(d)) return `default exclude: translated docs (${d}/)`;
    if (DOCS_LIKE.has(parent) && BARE_LANG.test(d)) return `default exclude: translated docs (${d}/)`;
  }
  if (TRANSLATED_FILE.some((re) => re.test(name))) return 'default exclude: translated docs';
  for (let k = exempt; k < dirs.length; k++) if (TEST_FOLDERS.has(dirs[k]!.toLowerCase())) return `default exclude: tests (${dirs[k]}/)`;
  if (TEST_FILE.test(name)) return 'default exclude: test file';
  if (GENERATED_DECLARATION.test(name)) return 'default exclude: generated declaration file';
  return null;
}
