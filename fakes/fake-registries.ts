/**
 * npm, PyPI and a sparse cargo index as one real HTTP server on 127.0.0.1, each speaking its published protocol
 * from an in-memory catalogue (docindex/sources/registries/):
 *
 * - npm (`/npm/`): package documents (`/npm/<name>`, `/npm/@scope%2fname`) and tarballs.
 * - PyPI (`/pypi/`): the simple index (`/pypi/simple/<name>/`, PEP 691 JSON or PEP 503 HTML by the Accept header),
 *   its files (sdists, wheels when asked for), and the JSON API (`/pypi/pypi/<name>/json`).
 * - crates (`/crates/`): the sparse index (`/crates/index/config.json` and the entries), downloads, and the web API
 *   (`/crates/api/v1/crates/<name>`).
 *
 * `publish` builds the real archive and can run at any time (a schedule must notice it). Faults per path prefix:
 * `hang` (never answers), `fail(status)`, `malformed` (a cut-off JSON body), `redirect` (302 elsewhere). Every request is recorded with its
 * Authorization header. `npmEnv`, `pipEnv` and `cargoHome` point each ecosystem's own configuration here.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import semver from 'semver';
import { type ArchiveMeta, crateArchive, distName, type Files, npmTarball, pypiSdist, pypiWheel } from './package-archives.js';

export type FakeEcosystem = 'npm' | 'pypi' | 'crates';

export interface PublishMeta {
  /** npm: a string or `{ type, url, directory }`; PyPI: the `Source` project URL; crates: the API's and Cargo.toml's. */
  repository?: string | { type?: string; url: string; directory?: string };
  /** npm's gitHead. */
  gitHead?: string;
  /** PyPI (true or a reason) and crates. */
  yanked?: boolean | string;
  /** npm. */
  deprecated?: string;
  description?: string;
  /** PyPI's `project_urls` (besides Source from `repository`). */
  projectUrls?: Record<string, string>;
  /** PyPI: also a wheel (true), or only a wheel (`'only'`). */
  wheel?: boolean | 'only';
  /** Where the metadata says the archive is (another server's, an internal address), instead of here. */
  archiveUrl?: string;
  /** Serve these bytes as the archive instead of building one (a malicious archive). */
  archive?: Buffer;
}

interface Release {
  /** As published (its canonical spelling). */
  name: string;
  version: string;
  meta: PublishMeta;
  publishedAt: string;
  /** Archive file name -> bytes. */
  files: Map<string, Buffer>;
}

interface Fault {
  prefix: string;
  kind: 'hang' | 'fail' | 'malformed' | 'redirect';
  status?: number;
  location?: string;
}

export interface RecordedRequest {
  path: string;
  accept: string | undefined;
  authorization: string | undefined;
}

const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
const repoUrl = (r: PublishMeta['repository']) => (typeof r === 'string' ? r : r?.url);
const pep503 = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

export class FakeRegistries {
  url = '';
  readonly requests: RecordedRequest[] = [];
  /** When set, every request must carry exactly this Authorization header (else 401), as a private registry asks. */
  requireAuthorization: string | undefined;
  /** PyPI answers HTML only (an index without PEP 691). */
  pypiHtmlOnly = false;
  /** crates' config.json gives `dl` with markers (`{crate}`, `{version}`, ...) instead of the default form. */
  cratesDlMarkers = false;
  private readonly catalogue = new Map<string, Release[]>();
  private readonly faults: Fault[] = [];
  private readonly tempDirs: string[] = [];
  private server: http.Server | undefined;

  static async start(host = '127.0.0.1'): Promise<FakeRegistries> {
    const f = new FakeRegistries();
    f.server = http.createServer((req, res) => f.serve(req, res));
    await new Promise<void>((r) => f.server!.listen(0, host, r));
    f.url = `http://${host}:${(f.server.address() as { port: number }).port}`;
    return f;
  }

  /** Publishes a version, with its archive built from `files` (under the ecosystem's prefix); visible at once. */
  async publish(ecosystem: FakeEcosystem, name: string, version: string, files: Files, meta: PublishMeta = {}): Promise<void> {
    const am: ArchiveMeta = { ...(meta.description && { description: meta.description }), ...(repoUrl(meta.repository) && { repository: repoUrl(meta.repository) }) };
    const archives = new Map<string, Buffer>();
    if (ecosystem === 'npm') archives.set(`${name.replace(/^@[^/]+\//, '')}-${version}.tgz`, meta.archive ?? (await npmTarball(name, version, files, am)));
    if (ecosystem === 'crates') archives.set(`${name}-${version}.crate`, meta.archive ?? (await crateArchive(name, version, files, am)));
    if (ecosystem === 'pypi') {
      if (meta.wheel !== 'only') archives.set(`${distName(name)}-${version}.tar.gz`, meta.archive ?? (await pypiSdist(name, version, files, am)));
      if (meta.wheel) archives.set(`${distName(name)}-${version}-py3-none-any.whl`, pypiWheel(name, version, files, am));
    }
    const key = this.key(ecosystem, name);
    const releases = (this.catalogue.get(key) ?? []).filter((r) => r.version !== version);
    releases.push({ name, version, meta, publishedAt: new Date().toISOString(), files: archives });
    this.catalogue.set(key, releases);
  }

  /** Marks a published version yanked (PyPI, crates) or deprecated (npm). */
  yank(ecosystem: FakeEcosystem, name: string, version: string): void {
    const r = this.catalogue.get(this.key(ecosystem, name))?.find((x) => x.version === version);
    if (!r) throw new Error(`${ecosystem} ${name} ${version} is not published`);
    r.meta = { ...r.meta, yanked: true, deprecated: 'yanked' };
  }

  hang(prefix: string): void {
    this.faults.push({ prefix, kind: 'hang' });
  }

  fail(prefix: string, status: number): void {
    this.faults.push({ prefix, kind: 'fail', status });
  }

  malformed(prefix: string): void {
    this.faults.push({ prefix, kind: 'malformed' });
  }

  /** Answers 302 to `to` followed by the rest of the path (another origin, an internal address). */
  redirect(prefix: string, to: string): void {
    this.faults.push({ prefix, kind: 'redirect', location: to });
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  /** Requests to exactly this path (its raw, encoded form). */
  hitsOf(p: string): number {
    return this.requests.filter((r) => r.path === p).length;
  }

  hitsUnder(prefix: string): number {
    return this.requests.filter((r) => r.path.startsWith(prefix)).length;
  }

  get npmRegistry(): string {
    return `${this.url}/npm/`;
  }

  get pypiIndex(): string {
    return `${this.url}/pypi/simple/`;
  }

  get cratesIndex(): string {
    return `sparse+${this.url}/crates/index/`;
  }

  /** npm's configuration for this registry: the registry setting and, with a token, a user .npmrc holding it. */
  npmEnv(token?: string): Record<string, string> {
    const dir = this.tempDir('fake-npmrc-');
    const userconfig = path.join(dir, 'npmrc');
    const nerf = this.npmRegistry.replace(/^https?:/, '');
    fs.writeFileSync(userconfig, `registry=${this.npmRegistry}\n${token ? `${nerf}:_authToken=${token}\n` : ''}`);
    fs.writeFileSync(path.join(dir, 'global-npmrc'), '');
    return { npm_config_registry: this.npmRegistry, npm_config_userconfig: userconfig, npm_config_globalconfig: path.join(dir, 'global-npmrc') };
  }

  /** pip's configuration: PIP_INDEX_URL, with credentials in it when given. */
  pipEnv(credentials?: { user: string; password: string }): Record<string, string> {
    const u = new URL(this.pypiIndex);
    if (credentials) {
      u.username = credentials.user;
      u.password = credentials.password;
    }
    return { PIP_INDEX_URL: u.href };
  }

  /** A CARGO_HOME whose config.toml replaces crates-io with this sparse index. */
  cargoHome(): string {
    const dir = this.tempDir('fake-cargo-home-');
    const toml = `[source.crates-io]\nreplace-with = "fake-mirror"\n\n[source.fake-mirror]\nregistry = "${this.cratesIndex}"\n`;
    fs.writeFileSync(path.join(dir, 'config.toml'), toml);
    return dir;
  }

  async close(): Promise<void> {
    for (const d of this.tempDirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server!.close(() => r()));
  }

  private tempDir(prefix: string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    this.tempDirs.push(dir);
    return dir;
  }

  private key(ecosystem: FakeEcosystem, name: string): string {
    return `${ecosystem}:${ecosystem === 'pypi' ? pep503(name) : ecosystem === 'crates' ? name.toLowerCase() : name}`;
  }

  private releases(ecosystem: FakeEcosystem, name: string): Release[] | undefined {
    return this.catalogue.get(this.key(ecosystem, name));
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const raw = (req.url ?? '/').split('?')[0]!;
    this.requests.push({ path: raw, accept: req.headers.accept, authorization: req.headers.authorization });
    const fault = this.faults.find((f) => raw.startsWith(f.prefix));
    if (fault?.kind === 'hang') return; // the connection stays open, unanswered
    if (fault?.kind === 'fail') return void res.writeHead(fault.status!, { 'content-type': 'text/plain' }).end('the registry is failing');
    if (fault?.kind === 'redirect') return void res.writeHead(302, { location: `${fault.location}${raw.slice(fault.prefix.length)}` }).end();
    if (fault?.kind === 'malformed') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"name": "cut", "versions": {');
    if (this.requireAuthorization && req.headers.authorization !== this.requireAuthorization) {
      return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"authentication required"}');
    }
    const answer = raw.startsWith('/npm/') ? this.npm(raw.slice(5)) : raw.startsWith('/pypi/') ? this.pypi(raw.slice(6), req.headers.accept ?? '') : raw.startsWith('/crates/') ? this.crates(raw.slice(8)) : null;
    if (!answer) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
    res.writeHead(200, { 'content-type': answer.type, 'content-length': answer.body.length }).end(answer.body);
  }

  // ---- npm ----

  private npm(rest: string): Answer | null {
    const tarball = /^(.+)\/-\/([^/]+\.tgz)$/.exec(rest);
    if (tarball) return this.file('npm', decodeURIComponent(tarball[1]!), tarball[2]!, 'application/octet-stream');
    const releases = this.releases('npm', decodeURIComponent(rest));
    return releases ? json(this.packument(decodeURIComponent(rest), releases)) : null;
  }

  private packument(name: string, releases: Release[]): unknown {
    const stable = releases.filter((r) => !semver.prerelease(r.version)).sort((a, b) => semver.compare(a.version, b.version));
    const newest = stable.at(-1) ?? releases.at(-1)!;
    const versions = Object.fromEntries(releases.map((r) => {
      const [file, bytes] = [...r.files][0]!;
      const dist = {
        tarball: r.meta.archiveUrl ?? `${this.url}/npm/${name}/-/${file}`,
        integrity: `sha512-${crypto.createHash('sha512').update(bytes).digest('base64')}`,
        shasum: crypto.createHash('sha1').update(bytes).digest('hex'),
      };
      const deprecated = r.meta.deprecated ?? (r.meta.yanked ? 'deprecated' : undefined);
      return [r.version, { name, version: r.version, description: r.meta.description, repository: r.meta.repository, gitHead: r.meta.gitHead, ...(deprecated && { deprecated }), dist }];
    }));
    return {
      _id: name, name, description: newest.meta.description, 'dist-tags': { latest: newest.version }, versions,
      time: { created: releases[0]!.publishedAt, modified: releases.at(-1)!.publishedAt, ...Object.fromEntries(releases.map((r) => [r.version, r.publishedAt])) },
      repository: newest.meta.repository,
    };
  }

  // ---- PyPI ----

  private pypi(rest: string, accept: string): Answer | null {
    const simple = /^simple\/([^/]+)\/?$/.exec(rest);
    if (simple) {
      const releases = this.releases('pypi', decodeURIComponent(simple[1]!));
      if (!releases) return null;
      const jsonWanted = !this.pypiHtmlOnly && accept.includes('application/vnd.pypi.simple.v1+json');
      return jsonWanted ? this.simpleJson(pep503(simple[1]!), releases) : this.simpleHtml(pep503(simple[1]!), releases);
    }
    const file = /^files\/([^/]+)\/([^/]+)$/.exec(rest);
    if (file) return this.file('pypi', decodeURIComponent(file[1]!), decodeURIComponent(file[2]!), 'application/octet-stream');
    const api = /^pypi\/([^/]+)\/json$/.exec(rest);
    const releases = api && this.releases('pypi', decodeURIComponent(api[1]!));
    if (!api || !releases) return null;
    const meta = releases.at(-1)!.meta;
    const repository = repoUrl(meta.repository);
    const urls = { ...(repository && { Source: repository }), ...meta.projectUrls };
    return json({ info: { name: api[1], summary: meta.description ?? null, home_page: null, project_urls: urls, version: releases.at(-1)!.version }, releases: {} });
  }

  private pypiFiles(project: string, releases: Release[]) {
    return releases.flatMap((r) => [...r.files].map(([filename, bytes]) => ({
      filename, url: r.meta.archiveUrl ?? `${this.url}/pypi/files/${project}/${filename}`, hashes: { sha256: sha256(bytes) },
      yanked: r.meta.yanked ?? false, 'upload-time': r.publishedAt, size: bytes.length,
    })));
  }

  private simpleJson(project: string, releases: Release[]): Answer {
    const body = { meta: { 'api-version': '1.1' }, name: project, versions: releases.map((r) => r.version), files: this.pypiFiles(project, releases) };
    return { type: 'application/vnd.pypi.simple.v1+json', body: Buffer.from(JSON.stringify(body)) };
  }

  private simpleHtml(project: string, releases: Release[]): Answer {
    const links = this.pypiFiles(project, releases).map((f) => {
      const yanked = f.yanked === false ? '' : ` data-yanked="${f.yanked === true ? '' : String(f.yanked)}"`;
      // relative links, as many indexes write them
      const href = f.url.startsWith(this.url) ? `../../files/${project}/${f.filename}` : f.url;
      return `<a href="${href}#sha256=${f.hashes.sha256}"${yanked}>${f.filename}</a><br/>`;
    });
    return { type: 'text/html; charset=utf-8', body: Buffer.from(`<!DOCTYPE html><html><body><h1>Links for ${project}</h1>${links.join('\n')}</body></html>`) };
  }

  // ---- crates ----

  private crates(rest: string): Answer | null {
    if (rest === 'index/config.json') {
      const dl = this.cratesDlMarkers ? `${this.url}/crates/files/{lowerprefix}/{crate}/{crate}-{version}.crate` : `${this.url}/crates/api/v1/crates`;
      return json({ dl, api: `${this.url}/crates` });
    }
    const index = /^index\/(?:1|2|3\/.|[^/]{2}\/[^/]{2})\/([^/]+)$/.exec(rest);
    if (index) {
      const releases = this.releases('crates', index[1]!);
      if (!releases) return null;
      const lines = releases.map((r) => JSON.stringify({ name: r.name, vers: r.version, deps: [], cksum: sha256([...r.files.values()][0]!), features: {}, yanked: r.meta.yanked === true, pubtime: r.publishedAt }));
      return { type: 'text/plain', body: Buffer.from(`${lines.join('\n')}\n`) };
    }
    const download = /^api\/v1\/crates\/([^/]+)\/([^/]+)\/download$/.exec(rest) ?? /^files\/.+\/([^/]+)\/\1-(.+)\.crate$/.exec(rest);
    if (download) return this.file('crates', download[1]!, `${download[1]}-${download[2]}.crate`, 'application/gzip');
    const api = /^api\/v1\/crates\/([^/]+)$/.exec(rest);
    const releases = api && this.releases('crates', api[1]!);
    if (!releases) return null;
    const meta = releases.at(-1)!.meta;
    return json({ crate: { name: api![1], description: meta.description ?? null, repository: repoUrl(meta.repository) ?? null, homepage: null } });
  }

  private file(ecosystem: FakeEcosystem, name: string, filename: string, type: string): Answer | null {
    for (const r of this.releases(ecosystem, name) ?? []) {
      const bytes = r.files.get(filename);
      if (bytes) return { type, body: bytes };
    }
    return null;
  }
}

interface Answer {
  type: string;
  body: Buffer;
}

const json = (value: unknown): Answer => ({ type: 'application/json', body: Buffer.from(JSON.stringify(value)) });
