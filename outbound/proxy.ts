import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { registerSecret } from '../core/redact.js';
import { isAddressRefusal } from './refusal.js';

/**
 * A forward proxy on 127.0.0.1 for the child processes that fetch user-supplied URLs (git over http(s), yt-dlp):
 * they cannot be given a lookup function, so they are given this proxy, and every connection they make (the first,
 * each redirect's, each media segment's) is made here, to an address the guard allows. HTTPS goes through CONNECT
 * (the tunnel carries TLS end to end, so certificates are checked by the tool as usual); plain HTTP is forwarded.
 *
 * Only holders of its random credentials (the tools this process starts) may use it; a refused address is answered
 * 403 with the guard's reason.
 */
export interface ForwardProxy {
  /** `http://gristmill:<secret>@127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

/** A tunnel or request idle this long is closed (a stuck tool is stopped by its own timeout before then). */
const IDLE_MS = 10 * 60_000;

/** Headers that concern one hop only, never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authorization', 'proxy-authenticate', 'proxy-connection', 'te', 'trailer', 'upgrade']);

function forwardable(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

/** `host:port` of a CONNECT request (`[v6]:port` for IPv6). */
function authority(target: string | undefined): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/\s]+)):(\d{1,5})$/.exec(target ?? '');
  const port = Number(m?.[3]);
  if (!m || !port || port > 65535) return undefined;
  return { host: (m[1] ?? m[2])!, port };
}

/** What the proxy needs of the guard (outbound/guard.ts): its checked name resolution. */
export interface ProxyGuard {
  resolve(host: string): Promise<unknown>;
  readonly lookup: net.LookupFunction;
}

export async function startForwardProxy(guard: ProxyGuard): Promise<ForwardProxy> {
  const secret = randomBytes(24).toString('base64url');
  registerSecret(secret);
  const expected = Buffer.from(`Basic ${Buffer.from(`gristmill:${secret}`).toString('base64')}`);
  const authorized = (req: http.IncomingMessage) => {
    const got = Buffer.from(String(req.headers['proxy-authorization'] ?? ''));
    return got.length === expected.length && timingSafeEqual(got, expected);
  };
  const refusal = (err: unknown) =>
    isAddressRefusal(err)
      ? { status: 403, text: 'Forbidden', body: err.message }
      : { status: 502, text: 'Bad Gateway', body: `The address could not be reached (${(err as { code?: string }).code ?? 'error'})` };

  const sockets = new Set<net.Socket>();
  const server = http.createServer();
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('clientError', (_err, s: net.Socket) => s.destroy());

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on('error', () => client.destroy());
    client.setTimeout(IDLE_MS, () => client.destroy());
    const answer = (status: number, text: string, body = '') =>
      client.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${status === 407 ? 'Proxy-Authenticate: Basic realm="gristmill"\r\n' : ''}\r\n${body}`);
    if (!authorized(req)) return answer(407, 'Proxy Authentication Required');
    const target = authority(req.url);
    if (!target) return answer(400, 'Bad Request', 'CONNECT wants host:port');
    guard.resolve(target.host).then(
      () => {
        if (client.destroyed) return; // the tool went away during the lookup
        // The lookup checks the addresses again at connect time; a literal was checked by resolve().
        const upstream = net.connect({ host: target.host, port: target.port, lookup: guard.lookup });
        let open = false;
        upstream.setTimeout(IDLE_MS, () => upstream.destroy());
        upstream.on('connect', () => {
          open = true;
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (head.length) upstream.write(head);
          upstream.pipe(client);
          client.pipe(upstream);
        });
        upstream.on('error', (err) => {
          if (open) return client.destroy();
          const r = refusal(err);
          answer(r.status, r.text, r.body);
        });
        upstream.on('close', () => client.destroy());
        client.on('close', () => upstream.destroy());
      },
      (err: unknown) => {
        const r = refusal(err);
        answer(r.status, r.text, r.body);
      },
    );
  });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const answer = (status: number, body: string, headers: http.OutgoingHttpHeaders = {}) => {
      if (res.headersSent) return res.destroy();
      res.writeHead(status, { 'content-type': 'text/plain', connection: 'close', ...headers }).end(body);
    };
    req.on('error', () => res.destroy());
    if (!authorized(req)) return answer(407, '', { 'proxy-authenticate': 'Basic realm="gristmill"' });
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      return answer(400, 'A proxy request names an absolute http:// URL');
    }
    if (target.protocol !== 'http:') return answer(400, 'Only http:// is forwarded; https goes through CONNECT');
    guard.resolve(target.hostname).then(
      () => {
        if (res.destroyed || req.destroyed) return; // the tool went away during the lookup
        const upstream = http.request({
          host: target.hostname.replace(/^\[|\]$/g, ''),
          port: Number(target.port) || 80,
          method: req.method,
          path: `${target.pathname}${target.search}`,
          headers: forwardable(req.headers),
          lookup: guard.lookup,
          agent: false,
          timeout: IDLE_MS,
        });
        upstream.on('timeout', () => upstream.destroy(new Error('timed out')));
        upstream.on('response', (up) => {
          res.writeHead(up.statusCode ?? 502, forwardable(up.headers));
          up.pipe(res);
          up.on('error', () => res.destroy());
        });
        upstream.on('error', (err) => {
          const r = refusal(err);
          answer(r.status, r.body);
        });
        res.on('close', () => upstream.destroy());
        req.pipe(upstream);
      },
      (err: unknown) => {
        const r = refusal(err);
        answer(r.status, r.body);
      },
    );
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://gristmill:${secret}@127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
