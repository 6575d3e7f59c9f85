import http from 'node:http';

/**
 * A rerank server on 127.0.0.1 speaking the published `/rerank` shapes: Cohere's, which Jina, vLLM, Infinity and
 * llama.cpp's server share (`{ model, query, documents, top_n }` -> `{ results: [{ index, relevance_score }] }`, best
 * first), and Text Embeddings Inference's (`{ query, texts }` -> `[{ index, score }]`). A document's score is the
 * share of the query's words it holds, so a test can predict the order. `script` queues special answers (a status,
 * a malformed body, a delay); `apiKey` makes it answer 401 to any other Bearer token.
 */
export type RerankScripted = { status?: number; body?: string; delayMs?: number };

export interface FakeRerank {
  url: string;
  requests: { path: string; headers: http.IncomingHttpHeaders; body: { model?: string; query: string; documents?: string[]; texts?: string[]; top_n?: number } }[];
  script: RerankScripted[];
  /** Added to every answer (latency of a real model), in ms. */
  delayMs: number;
  close(): Promise<void>;
}

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);

/** The share of the query's words a document holds. */
export function overlapScore(query: string, document: string): number {
  const q = words(query);
  const d = words(document);
  return q.size ? [...q].filter((w) => d.has(w)).length / q.size : 0;
}

function answer(body: FakeRerank['requests'][number]['body']): unknown {
  const docs = body.documents ?? body.texts ?? [];
  const scored = docs.map((doc, index) => ({ index, score: overlapScore(body.query, doc) })).sort((a, b) => b.score - a.score || a.index - b.index);
  if (body.texts) return scored; // TEI: a bare list
  return { id: 'fake', results: scored.slice(0, body.top_n ?? docs.length).map((r) => ({ index: r.index, relevance_score: r.score })), meta: { billed_units: { search_units: 1 } } };
}

export async function startFakeRerank(opts: { apiKey?: string } = {}): Promise<FakeRerank> {
  const fake: Omit<FakeRerank, 'url' | 'close'> = { requests: [], script: [], delayMs: 0 };
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    let body: FakeRerank['requests'][number]['body'];
    try {
      body = JSON.parse(raw);
    } catch {
      res.writeHead(422, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'body is not JSON' }));
      return;
    }
    fake.requests.push({ path: req.url ?? '', headers: req.headers, body });
    const next = fake.script.shift();
    const delay = fake.delayMs + (next?.delayMs ?? 0);
    if (delay) await new Promise((r) => setTimeout(r, delay));
    if (res.destroyed) return;
    if (next?.status || next?.body !== undefined) {
      res.writeHead(next.status ?? 200, { 'content-type': 'application/json' }).end(next.body ?? JSON.stringify({ message: `scripted ${next.status}` }));
      return;
    }
    if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'invalid api token' }));
      return;
    }
    if (!/^\/(v1\/|v2\/)?rerank$/.test(req.url ?? '') || !(body.documents ?? body.texts) || typeof body.query !== 'string') {
      res.writeHead(req.url?.endsWith('rerank') ? 422 : 404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'not a rerank request' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer(body)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return Object.assign(fake, {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  });
}
