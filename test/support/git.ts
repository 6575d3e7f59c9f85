import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, stdio: ['ignore', 'pipe', 'pipe'] }).toString().trim();
}

/** A real repository on disk: write files, commit, tag. */
export class TestRepo {
  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
    git(dir, 'init', '--quiet', '--initial-branch=main');
  }

  write(files: Record<string, string | null>): this {
    for (const [rel, content] of Object.entries(files)) {
      const file = path.join(this.dir, rel);
      if (content === null) fs.rmSync(file, { force: true });
      else {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, content);
      }
    }
    return this;
  }

  commit(message = 'change'): string {
    git(this.dir, 'add', '-A');
    git(this.dir, 'commit', '--quiet', '--allow-empty', '-m', message);
    return git(this.dir, 'rev-parse', 'HEAD');
  }

  tag(name: string, annotated = false): this {
    if (annotated) git(this.dir, 'tag', '-a', name, '-m', name);
    else git(this.dir, 'tag', name);
    return this;
  }

  /** A bare copy under `root/<owner>/<repo>.git`, as a git host keeps it. */
  publish(root: string, owner: string, repo: string): string {
    const bare = path.join(root, owner, `${repo}.git`);
    fs.mkdirSync(path.dirname(bare), { recursive: true });
    execFileSync('git', ['clone', '--quiet', '--bare', this.dir, bare], { env: GIT_ENV });
    return bare;
  }

  /** Pushes commits and tags to the published bare copy. */
  push(bare: string): void {
    git(this.dir, 'push', '--quiet', '--tags', bare, 'main');
  }
}

export interface GitHost {
  url: string;
  requests: { path: string; authorized: boolean }[];
  /** Holds every request until the returned function is called (a slow or hung host). */
  stall(): () => void;
  close(): Promise<void>;
}

/**
 * A git host on 127.0.0.1 speaking git's smart HTTP protocol through `git http-backend` (the CGI program that git
 * itself ships), with one token accepted as `Authorization: Basic x-access-token:<token>` or `Bearer <token>`.
 */
/** A git host over smart HTTP; `token: null` serves anyone, as a public host does (a package's repository). */
export async function startGitHost(root: string, token: string | null): Promise<GitHost> {
  const requests: GitHost['requests'] = [];
  let gate: Promise<void> | undefined;
  const accepted = new Set([`Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`, `Bearer ${token}`]);
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const authorized = token === null || accepted.has(req.headers.authorization ?? '');
    requests.push({ path: url.pathname, authorized });
    await gate;
    if (!authorized) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end();
      return;
    }
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        REMOTE_USER: 'x-access-token',
        REMOTE_ADDR: '127.0.0.1',
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let started = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (started) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const i = line.indexOf(':');
        const key = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (key.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else headers[key] = value;
      }
      res.writeHead(status, headers);
      started = true;
      res.write(head.subarray(end + 4));
    });
    cgi.stdout.on('end', () => res.end());
    cgi.on('error', () => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stall: () => {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** A small guide page for fixture repositories: one heading section with prose and a TypeScript block. */
export const WIDGET_GUIDE = `# Guide

## Rendering

Call render with a root element to mount a widget tree into the page.

\`\`\`ts
import { render } from 'widget-kit';
render(document.getElementById('root'));
\`\`\`
`;
