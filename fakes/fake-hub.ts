import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

/**
 * A model hub on 127.0.0.1 that speaks the Hugging Face hub's file protocol as transformers.js uses it:
 * `GET /<owner>/<model>/resolve/main/<file>` (a `Range: bytes=0-0` probe answered 206 with `Content-Range`), 404
 * for a file it does not have. It serves the models given as folders, so the download path runs without internet.
 */
export interface FakeHub {
  url: string;
  /** Paths fetched with their whole body (not the range probes). */
  downloads: string[];
  close(): Promise<void>;
}

export async function startFakeHub(models: Record<string, string>): Promise<FakeHub> {
  const downloads: string[] = [];
  const server = http.createServer((req, res) => {
    const m = /^\/(.+?)\/resolve\/main\/(.+)$/.exec(decodeURIComponent((req.url ?? '').split('?')[0]!));
    const dir = m ? models[m[1]!] : undefined;
    const file = dir ? path.join(dir, m![2]!) : undefined;
    if (!file || !file.startsWith(dir! + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Entry not found');
      return;
    }
    const body = fs.readFileSync(file);
    if (req.headers.range === 'bytes=0-0') {
      res.writeHead(206, { 'content-length': '1', 'content-range': `bytes 0-0/${body.length}`, 'content-type': 'application/octet-stream' }).end(body.subarray(0, 1));
      return;
    }
    downloads.push(req.url ?? '');
    res.writeHead(200, { 'content-length': String(body.length), 'content-type': 'application/octet-stream' });
    // In pieces, as a real download arrives, so progress is reported along the way.
    const piece = Math.max(1, Math.ceil(body.length / 4));
    let at = 0;
    const next = () => {
      if (at >= body.length) return void res.end();
      const chunk = body.subarray(at, at + piece);
      at += piece;
      res.write(chunk, () => setTimeout(next, 5));
    };
    next();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
    downloads,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
