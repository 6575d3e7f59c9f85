import { Parser } from 'htmlparser2';
import { PermanentError } from '../../../core/errors.js';
import type { PackageInfo, PackageVersion, Registry, SourceContext } from '../types.js';
import { asObject, asString, type ClientLimits, getDocument, httpUrl, invalid, jsonObject, type RegistryCall, startCall } from './fetch.js';
import { gitHostRepository } from './repository.js';
import { latestVersion, PEP440_SCHEME, sortVersions } from './versions.js';

/**
 * PyPI, or a mirror of it, through pip's index URL: the simple API for a project's files (PEP 691 JSON, else PEP 503
 * HTML; yanked files per PEP 592, upload times per PEP 700), and, when the index has it beside the simple index, the
 * JSON API (`<root>/pypi/<name>/json`) for the summary and the project URLs that name its repository.
 */
const MB = 1024 * 1024;
const DEFAULTS: ClientLimits = { timeoutMs: 30_000, maxBytes: 32 * MB };

/** PEP 503: lowercase, runs of `-`, `_` and `.` as one `-`. */
export const normalizePypiName = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

interface IndexFile {
  filename: string;
  url: string;
  sha256?: string;
  yanked: boolean;
  uploadedAt?: string;
  size?: number;
}

/** The version a file is of, and how good a source of documentation it is (lower is better); null for other files. */
export function pypiFileVersion(filename: string, project: string): { version: string; rank: number; kind: 'tgz' | 'zip' } | null {
  if (filename.endsWith('.whl')) {
    const parts = filename.slice(0, -4).split('-');
    if (parts.length < 5 || normalizePypiName(parts[0]!) !== project) return null;
    return { version: parts[1]!, rank: filename.endsWith('-py3-none-any.whl') || filename.endsWith('-py2.py3-none-any.whl') ? 2 : 3, kind: 'zip' };
  }
  const sdist = /^(.+)\.(tar\.gz|zip)$/.exec(filename);
  if (!sdist) return null;
  const base = sdist[1]!;
  for (let i = base.indexOf('-'); i > 0; i = base.indexOf('-', i + 1)) {
    if (normalizePypiName(base.slice(0, i)) === project && i + 1 < base.length) {
      return { version: base.slice(i + 1), rank: sdist[2] === 'zip' ? 1 : 0, kind: sdist[2] === 'zip' ? 'zip' : 'tgz' };
    }
  }
  return null;
}

const SHA256 = /^[0-9a-f]{64}$/i;

/** PEP 691's `files`. */
function filesFromJson(what: string, text: string, base: string): IndexFile[] {
  const files = jsonObject(what, text).files;
  if (!Array.isArray(files)) throw invalid(`${what} has no list of files`);
  return files.flatMap((raw) => {
    const f = asObject(raw);
    const filename = asString(f.filename);
    const url = httpUrl(f.url, base);
    if (!filename || !url) return [];
    const sha256 = asString(asObject(f.hashes).sha256);
    const uploaded = asString(f['upload-time']);
    return [{
      filename, url, yanked: Boolean(f.yanked),
      ...(sha256 && SHA256.test(sha256) && { sha256: sha256.toLowerCase() }),
      ...(uploaded && !Number.isNaN(Date.parse(uploaded)) && { uploadedAt: new Date(uploaded).toISOString() }),
      ...(typeof f.size === 'number' && { size: f.size }),
    }];
  });
}

/** PEP 503's anchors: the text is the file's name, the URL's fragment its hash, `data-yanked` marks it yanked. */
function filesFromHtml(html: string, base: string): IndexFile[] {
  const files: IndexFile[] = [];
  let open: { href: string; yanked: boolean; text: string } | null = null;
  const parser = new Parser({
    onopentag(tag, attrs) {
      if (tag === 'a' && attrs.href) open = { href: attrs.href, yanked: 'data-yanked' in attrs, text: '' };
    },
    ontext(text) {
      if (open) open.text += text;
    },
    onclosetag(tag) {
      if (tag !== 'a' || !open) return;
      const url = httpUrl(open.href, base);
      const hash = /#sha256=([0-9a-f]{64})$/i.exec(open.href)?.[1];
      if (url) files.push({ filename: open.text.trim(), url: url.replace(/#.*$/, ''), yanked: open.yanked, ...(hash && { sha256: hash.toLowerCase() }) });
      open = null;
    },
  }, { decodeEntities: true });
  parser.end(html);
  return files;
}

/** The JSON API beside the simple index (`.../simple/` -> `.../pypi/<name>/json`); null when the index has none. */
async function projectJson(r: RegistryCall, project: string): Promise<Record<string, unknown> | null> {
  const root = r.endpoint.url.replace(/\+?simple\/$/, '');
  const what = `The PyPI JSON API's document of "${project}"`;
  try {
    const doc = await getDocument(what, `${root}pypi/${encodeURIComponent(project)}/json`, r, 'application/json');
    return doc ? asObject(jsonObject(what, doc.text).info) : null;
  } catch (err) {
    // a mirror without the JSON API, or with a broken one: the simple index is enough; a refusal or a timeout is not skipped
    if (err instanceof PermanentError && err.code !== 'ADDRESS_NOT_ALLOWED') return null;
    throw err;
  }
}

/** The keys of `project_urls` that name a repository, best first. */
const REPO_KEYS = ['source', 'sourcecode', 'repository', 'code', 'github', 'gitlab', 'homepage'];

/** The project's repository from its project URLs (or home page), where one points at a git host. */
export function pypiRepository(info: Record<string, unknown>): string | null {
  const urls = Object.entries(asObject(info.project_urls)).flatMap(([k, v]) => (typeof v === 'string' ? [[k.toLowerCase().replace(/[^a-z]/g, ''), v] as const] : []));
  for (const key of REPO_KEYS) {
    const hit = urls.find(([k, v]) => k === key && gitHostRepository(v));
    if (hit) return gitHostRepository(hit[1]);
  }
  return gitHostRepository(asString(info.home_page)) ?? urls.map(([, v]) => gitHostRepository(v)).find(Boolean) ?? null;
}

function versionsOf(files: IndexFile[], project: string, repository: string | null): PackageVersion[] {
  const byVersion = new Map<string, (IndexFile & { rank: number; kind: 'tgz' | 'zip' })[]>();
  for (const f of files) {
    const v = pypiFileVersion(f.filename, project);
    if (v) byVersion.set(v.version, [...(byVersion.get(v.version) ?? []), { ...f, rank: v.rank, kind: v.kind }]);
  }
  return [...byVersion].map(([version, list]) => {
    const live = list.filter((f) => !f.yanked);
    const best = (live.length ? live : list).sort((a, b) => a.rank - b.rank)[0]!;
    const times = list.flatMap((f) => (f.uploadedAt ? [f.uploadedAt] : [])).sort();
    return {
      version,
      publishedAt: times[0] ?? null,
      // PEP 592: a release is yanked when all its files are
      yanked: live.length === 0,
      archive: { url: best.url, kind: best.kind, ...(best.sha256 && { sha256: best.sha256 }), ...(best.size !== undefined && { size: best.size }) },
      repository: repository ? { url: repository } : null,
    };
  });
}

async function lookup(name: string, ctx: SourceContext, limits: ClientLimits): Promise<PackageInfo | null> {
  const r = await startCall('pypi', name, ctx, limits);
  const project = normalizePypiName(name);
  const what = `The PyPI index's page of "${project}"`;
  const doc = await getDocument(what, `${r.endpoint.url}${encodeURIComponent(project)}/`, r, 'application/vnd.pypi.simple.v1+json, text/html;q=0.1');
  if (!doc) return null;
  const json = /application\/vnd\.pypi\.simple\.v1\+json|application\/json/.test(doc.contentType);
  const files = json ? filesFromJson(what, doc.text, doc.url) : filesFromHtml(doc.text, doc.url);
  const info = await projectJson(r, project);
  const versions = versionsOf(files, project, info ? pypiRepository(info) : null);
  if (!versions.length) return null; // a project with no release files has nothing to index
  sortVersions(versions, PEP440_SCHEME);
  return {
    ecosystem: 'pypi',
    name: project,
    description: info ? asString(info.summary) : null,
    homepage: info ? httpUrl(info.home_page, doc.url) ?? httpUrl(asObject(info.project_urls).Homepage, doc.url) : null,
    latest: latestVersion(versions, PEP440_SCHEME)!,
    versions,
  };
}

/** PyPI's client, with its bounds (tests shorten them). */
export function pypiRegistry(limits: Partial<ClientLimits> = {}): Registry {
  const l = { ...DEFAULTS, ...limits };
  return { ecosystem: 'pypi', lookup: (name, ctx) => lookup(name, ctx, l) };
}
