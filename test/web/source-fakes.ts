import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';

/**
 * Just enough of an npm registry and of a documentation site for the web interface's tests (test/web/sources.test.ts):
 * npm's package document (`GET /<name>`, `GET /@scope%2fname`) with a real tarball per version, and a small HTML site
 * with llms.txt. Every other path (PyPI's simple API, a sparse crates index) is 404, so a lookup there finds nothing.
 */
export interface FakePackage {
  name: string;
  versions: string[];
  readme: string;
  /** As the registry records it; a closed port by default, so the package's archive is read instead. */
  repository?: string;
}

export class FakeSources {
  readonly requests: string[] = [];
  private readonly tarballs = new Map<string, Buffer>();

  private constructor(
    private readonly server: http.Server,
    private readonly packages: Map<string, FakePackage>,
  ) {}

  static async start(packages: FakePackage[]): Promise<FakeSources> {
    const fake = new FakeSources(http.createServer(), new Map(packages.map((p) => [p.name, p])));
    for (const p of packages) for (const v of p.versions) fake.tarballs.set(fake.tarballPath(p.name, v), packTarball(p, v));
    fake.server.on('request', (req, res) => fake.answer(req, res));
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** npm's registry setting (`npm_config_registry`). */
  get npmRegistry(): string {
    return `${this.url}/`;
  }

  /** The documentation site's start URL. */
  get siteUrl(): string {
    return `${this.url}/site/docs/`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private tarballPath(name: string, version: string): string {
    return `/${name}/-/${name.split('/').pop()}-${version}.tgz`;
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const pathname = decodeURIComponent(new URL(req.url ?? '/', this.url).pathname);
    this.requests.push(pathname);
    const tarball = this.tarballs.get(pathname);
    if (tarball) return void res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(tarball);
    const page = SITE[pathname];
    if (page) return void res.writeHead(200, { 'Content-Type': page.type }).end(page.body);
    const pkg = this.packages.get(pathname.slice(1));
    if (pkg) return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(this.document(pkg)));
    res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"Not found"}');
  }

  /** npm's package document (the full form, which also answers a request for the abbreviated one). */
  private document(p: FakePackage) {
    const repository = { type: 'git', url: p.repository ?? `git+https://127.0.0.1:9/acme/${p.name.replace(/\W+/g, '-')}.git` };
    const versions = Object.fromEntries(
      p.versions.map((v) => {
        const body = this.tarballs.get(this.tarballPath(p.name, v))!;
        const dist = {
          tarball: `${this.url}${this.tarballPath(p.name, v)}`,
          shasum: createHash('sha1').update(body).digest('hex'),
          integrity: `sha512-${createHash('sha512').update(body).digest('base64')}`,
        };
        return [v, { name: p.name, version: v, description: `${p.name} ${v}`, repository, dist }];
      }),
    );
    const time = Object.fromEntries(p.versions.map((v, i) => [v, new Date(Date.UTC(2026, 0, 1 + i)).toISOString()]));
    return { name: p.name, 'dist-tags': { latest: p.versions.at(-1) }, versions, time, repository, readme: p.readme, description: `${p.name} for tests` };
  }
}

/** `package/` with package.json and the README, gzipped, as npm packs it. */
function packTarball(p: FakePackage, version: string): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-fake-package-'));
  try {
    fs.mkdirSync(path.join(dir, 'package'));
    fs.writeFileSync(path.join(dir, 'package', 'package.json'), JSON.stringify({ name: p.name, version }));
    fs.writeFileSync(path.join(dir, 'package', 'README.md'), p.readme);
    const file = path.join(dir, 'package.tgz');
    tar.create({ gzip: true, cwd: dir, file, sync: true, portable: true }, ['package']);
    return fs.readFileSync(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const html = (title: string, body: string) => `<!doctype html><html><head><title>${title}</title></head><body><nav>Home</nav><main>${body}</main></body></html>`;

const SITE: Record<string, { type: string; body: string }> = {
  '/site/docs/': { type: 'text/html', body: html('Gadget docs', '<h1>Gadget docs</h1><p>Gadgets are configured with <code>gadget.config()</code>.</p><a href="/site/docs/setup">Setup</a>') },
  '/site/docs/setup': { type: 'text/html', body: html('Setup', '<h1>Setup</h1><pre><code class="language-js">gadget.config({ speed: 2 })</code></pre>') },
  '/site/llms.txt': { type: 'text/plain', body: '# Gadget docs\n\n- [Setup](/site/docs/setup): configuring a gadget\n' },
};
