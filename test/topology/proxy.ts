import http from 'node:http';
import type { Socket } from 'node:net';

/**
 * The reverse proxy in front of the API replicas, as a load balancer in production: round-robin over the
 * upstreams; one that refuses a connection is skipped (the request goes to the next) and left out for a while
 * (DEAD_FOR_MS);
 * a stream whose upstream dies is cut, so its client reconnects (with Last-Event-ID) and lands on another.
 */
export interface Proxy {
  url: string;
  /** How many requests each upstream (by index) answered. */
  served: Map<number, number>;
  close(): Promise<void>;
}

const DEAD_FOR_MS = 2000;

export async function startProxy(upstreams: () => string[]): Promise<Proxy> {
  let next = 0;
  const deadUntil = new Map<string, number>();
  const served = new Map<number, number>();
  const sockets = new Set<Socket>();

  const forward = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, tried: Set<string>) => {
    const all = upstreams();
    const alive = all.filter((u) => !tried.has(u) && (deadUntil.get(u) ?? 0) <= Date.now());
    const candidates = alive.length ? alive : all.filter((u) => !tried.has(u));
    if (!candidates.length) {
      res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'NO_UPSTREAM' } }));
      return;
    }
    const upstream = candidates[next++ % candidates.length]!;
    tried.add(upstream);
    const target = new URL(req.url ?? '/', upstream);
    // A connection per request: a kept-alive one the replica closes while we send on it would fail a request the
    // replica may have read, which must not be sent again.
    const out = http.request(target, { method: req.method, headers: { ...req.headers, host: target.host }, agent: false }, (up) => {
      served.set(all.indexOf(upstream), (served.get(all.indexOf(upstream)) ?? 0) + 1);
      // Which replica answered, so a test can tell which of its streams lost their replica.
      res.writeHead(up.statusCode ?? 502, { ...up.headers, 'x-upstream': upstream });
      up.pipe(res);
      // The upstream died mid-response (an SSE stream, say): cut the client too, so it reconnects.
      up.on('close', () => {
        if (!up.complete) res.destroy();
      });
      up.on('error', () => res.destroy());
    });
    out.on('error', (err: NodeJS.ErrnoException) => {
      if (res.headersSent) return void res.destroy();
      // Refused: the replica is down and never saw the request, so another one gets it. Anything else may have
      // reached it: the client gets a 502, as from a real load balancer, and decides whether to send it again.
      if (err.code !== 'ECONNREFUSED') {
        res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'UPSTREAM_FAILED', message: err.message } }));
        return;
      }
      deadUntil.set(upstream, Date.now() + DEAD_FOR_MS);
      forward(req, res, body, tried);
    });
    res.on('close', () => out.destroy());
    out.end(body);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => forward(req, res, Buffer.concat(chunks), new Set()));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    served,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
