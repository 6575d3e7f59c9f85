import http from 'node:http';
import type net from 'node:net';

/**
 * Servers for the outbound tests. On Linux the whole of 127.0.0.0/8 is loopback, so a test can have a "public"
 * server on 127.0.0.2 (allowed by OUTBOUND_ALLOW=127.0.0.2, the way an operator allows a LAN host) beside an
 * "internal" one on 127.0.0.1 that must never be reached. Each records every request it gets.
 */
export interface RecordingServer {
  url: string;
  port: number;
  hits: string[];
  close(): Promise<void>;
}

export async function recordingServer(host: string, handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<RecordingServer> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What an internal service would hold: a page nobody outside may read. */
export const INTERNAL_SECRET = 'internal-only: db password hunter2-hunter2';

/** The "internal" server: answers every path with the secret (as HTML, so a page reader would take it). */
export const internalServer = () =>
  recordingServer('127.0.0.1', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><head><meta property="og:description" content="${INTERNAL_SECRET}"></head><body><p>${INTERNAL_SECRET}</p></body></html>`);
  });

/** The "public" server (127.0.0.2): `/to?url=<u>` redirects there (302); `/page` is whatever `page` answers. */
export const publicServer = (page: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_q, r) => r.writeHead(404).end()) =>
  recordingServer('127.0.0.2', (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/to') return res.writeHead(302, { location: u.searchParams.get('url') ?? '/' }).end();
    page(req, res);
  });
