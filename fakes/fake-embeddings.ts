import http from 'node:http';

/**
 * An OpenAI-compatible embeddings server on 127.0.0.1: `POST /v1/embeddings` (and Azure's
 * `/openai/deployments/<d>/embeddings?api-version=`). Vectors are a deterministic function of the text.
 * `script` queues special answers: 429 with Retry-After, 500, 401, 404, malformed bodies, and `stall`: the start of
 * an answer, then nothing.
 */
export type Scripted = { status: number; retryAfter?: string; body?: string; stall?: boolean };

export interface FakeEmbeddings {
  url: string;
  requests: { at: number; path: string; headers: http.IncomingHttpHeaders; body: { model: string; input: string[]; dimensions?: number } }[];
  script: Scripted[];
  dimensions: number;
  close(): Promise<void>;
}

export function vectorFor(text: string, dims: number): number[] {
  const v = Array.from({ length: dims }, (_, i) => Math.sin((text.length + 1) * (i + 1) + [...text].reduce((s, c) => s + c.charCodeAt(0), 0)));
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

export async function startFakeEmbeddings(opts: { dimensions?: number; apiKey?: string } = {}): Promise<FakeEmbeddings> {
  const fake: Omit<FakeEmbeddings, 'url' | 'close'> = { requests: [], script: [], dimensions: opts.dimensions ?? 8 };
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body = raw ? JSON.parse(raw) : {};
    fake.requests.push({ at: Date.now(), path: req.url ?? '', headers: req.headers, body });
    const next = fake.script.shift();
    if (next?.stall) {
      res.writeHead(next.status, { 'content-type': 'application/json', 'content-length': 1000 }).write('{"object": "list", "data": [');
      return;
    }
    if (next) {
      res.writeHead(next.status, { 'content-type': 'application/json', ...(next.retryAfter && { 'retry-after': next.retryAfter }) });
      res.end(next.body ?? JSON.stringify({ error: { message: `scripted ${next.status}` } }));
      return;
    }
    const key = req.headers.authorization?.replace(/^Bearer /, '') ?? req.headers['api-key'];
    if (opts.apiKey && key !== opts.apiKey) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Incorrect API key provided' } }));
      return;
    }
    if (!/^\/(v1|openai\/deployments\/[^/]+)\/embeddings(\?|$)/.test(req.url ?? '')) {
      res.writeHead(404).end();
      return;
    }
    const dims = body.dimensions ?? fake.dimensions;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        object: 'list',
        model: body.model,
        // Out of order on purpose: clients must sort by index.
        data: (body.input as string[]).map((t, index) => ({ object: 'embedding', index, embedding: vectorFor(t, dims) })).reverse(),
        usage: { prompt_tokens: 1, total_tokens: 1 },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return Object.assign(fake, {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}
