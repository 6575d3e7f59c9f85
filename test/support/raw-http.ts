import http from 'node:http';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** From sending the request to the response's headers. */
  ms: number;
}

export interface RawRequest {
  method?: string;
  /** Sent exactly as written (no URL normalisation): `//api`, `/API/`, `%2e%2e` reach the server as they are. */
  path: string;
  headers?: Record<string, string | number>;
  body?: string | Buffer;
  /** Send the body in pieces, so a server's streaming parser sees it arrive. */
  chunks?: (string | Buffer)[];
  /** Give up (and count it as a hang) after this long; default 15 s. */
  timeoutMs?: number;
  /** Read the response's headers only, then drop the connection (event streams never end). */
  headOnly?: boolean;
}

/**
 * One HTTP request through node:http rather than fetch, so that paths, methods, headers and bodies go out as written,
 * malformed ones included. Resolves with the answer, or rejects with `hang` after the timeout.
 */
export function rawRequest(baseUrl: string, r: RawRequest): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: r.method ?? 'GET',
        path: r.path,
        // Node sends a GET or DELETE body without a length unless told: the server would read it as the next request.
        headers: { Connection: 'close', ...(r.body !== undefined && { 'Content-Length': Buffer.byteLength(r.body) }), ...r.headers },
        agent: false,
        // Checked by the tests themselves: the server must cope with whatever arrives.
        insecureHTTPParser: true,
      },
      (res) => {
        const ms = performance.now() - t0;
        const head = { status: res.statusCode ?? 0, headers: res.headers, ms };
        if (r.headOnly && String(res.headers['content-type']).startsWith('text/event-stream')) {
          clearTimeout(timer);
          req.destroy();
          resolve({ ...head, text: '' });
          return;
        }
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ ...head, text: Buffer.concat(parts).toString('utf8') });
        });
        res.on('error', () => {
          clearTimeout(timer);
          resolve({ ...head, text: Buffer.concat(parts).toString('utf8') });
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`hang: ${r.method ?? 'GET'} ${r.path.slice(0, 200)} got no answer in ${r.timeoutMs ?? 15_000} ms`));
    }, r.timeoutMs ?? 15_000);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    if (r.chunks) {
      for (const c of r.chunks) req.write(c);
      req.end();
    } else req.end(r.body);
  });
}
