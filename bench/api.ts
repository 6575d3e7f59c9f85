import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLogger } from '../core/log.js';
import { parseServerTiming } from '../docindex/search/timings.js';
import { freePort } from '../fakes/ports.js';
import { buildTinyModel } from '../fakes/tiny-model.js';
import { loadConfig } from '../runtime/config.js';
import { TASK_QUEUE_NAMES } from '../runtime/services.js';
import { startStack } from '../runtime/stack.js';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const median = (xs: number[]) => pct(xs, 50);

/** The words of a web framework's documentation; the rest of the text draws from pseudo-words with a skew. */
const TERMS = (
  'route routes plugin plugins hook hooks schema schemas request reply server decorate decorator validation serialization logger ' +
  'error errors handler lifecycle content type parser encapsulation register options prefix listen close ready instance context ' +
  'query params body headers status payload stream json cookie cors middleware timeout shutdown typescript test inject'
).split(' ');
const QUERIES = [
  'how do I register a route with a schema',
  'onRequest hook lifecycle',
  'decorate the request',
  'validation error handler',
  'logger',
  'content type parser for json body',
  'plugin encapsulation and prefix',
  'reply serialization of the payload',
  'server listen options',
  'graceful shutdown close hook',
];

/** A small deterministic generator, so every run indexes the same corpus. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A framework's documentation as Markdown: 110 pages of 8 sections, prose of 40 to 120 words each and a code block
 * in five of them, about 1,500 snippets once parsed (the size of fastify's docs).
 */
async function generateDocs(root: string): Promise<void> {
  const rnd = random(24);
  const vocabulary = [...TERMS, ...Array.from({ length: 1500 }, (_, i) => `w${i.toString(36)}x`)];
  const words = (n: number) => Array.from({ length: n }, () => vocabulary[Math.floor(vocabulary.length * rnd() ** 2)]!).join(' ');
  for (let f = 0; f < 110; f++) {
    const topic = `${TERMS[f % TERMS.length]} ${TERMS[(f * 7) % TERMS.length]}`;
    let md = `# The ${topic}\n\n${words(30)}.\n\n`;
    for (let s = 0; s < 8; s++) {
      md += `## ${words(3)}\n\n${words(40 + Math.floor(rnd() * 80))}.\n\n`;
      if (s < 5) md += `\`\`\`js\nfastify.${TERMS[(f + s) % TERMS.length]}('/${TERMS[s]}', async (request, reply) => {\n  return { ${TERMS[(f * s) % TERMS.length]}: ${s} };\n});\n\`\`\`\n\n`;
    }
    await fs.mkdir(path.join(root, 'docs', `part-${f % 6}`), { recursive: true });
    await fs.writeFile(path.join(root, 'docs', `part-${f % 6}`, `page-${f}.md`), md);
  }
}

type Transport = 'json' | 'txt' | 'mcp';
interface Cell {
  times: number[];
  bytes: number[];
  phases: Map<string, number[]>;
}

/** One question through one transport: its time, its size, and the server's phases (HTTP only). */
type Ask = (query: string) => Promise<{ ms: number; bytes: number; timing: Map<string, number> }>;

function httpAsk(url: string, lib: string, mode: string, type: 'json' | 'txt'): Ask {
  return async (query) => {
    const t0 = performance.now();
    const res = await fetch(`${url}/api/v1/context?${new URLSearchParams({ libraryId: lib, query, searchMode: mode, type })}`);
    const body = await res.text();
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${mode} ${type} "${query}": ${res.status} ${body.slice(0, 200)}`);
    if (type === 'json' && (JSON.parse(body) as { searchMode: string }).searchMode !== mode) throw new Error(`asked ${mode}, ran another mode`);
    return { ms, bytes: Buffer.byteLength(body), timing: parseServerTiming(res.headers.get('server-timing')) };
  };
}

function mcpAsk(client: Client, lib: string, mode: string): Ask {
  return async (query) => {
    const t0 = performance.now();
    const r = await client.callTool({ name: 'query-docs', arguments: { libraryId: lib, query, searchMode: mode } });
    const ms = performance.now() - t0;
    const text = (r.content as { text: string }[])[0]!.text;
    if (r.isError) throw new Error(`query-docs ${mode} "${query}": ${text.slice(0, 200)}`);
    return { ms, bytes: Buffer.byteLength(text), timing: new Map() };
  };
}

/** `clients` concurrent clients, each asking `perClient` questions in turn. */
async function measure(asks: Ask[], perClient: number): Promise<Cell> {
  const cell: Cell = { times: [], bytes: [], phases: new Map() };
  await Promise.all(
    asks.map(async (ask, c) => {
      for (let i = 0; i < perClient; i++) {
        const r = await ask(QUERIES[(c + i) % QUERIES.length]!);
        cell.times.push(r.ms);
        cell.bytes.push(r.bytes);
        for (const [name, ms] of r.timing) cell.phases.set(name, [...(cell.phases.get(name) ?? []), ms]);
      }
    }),
  );
  return cell;
}

/**
 * Context answers through the API as clients get them (docs/api.md): `GET /api/v1/context` as JSON and as text, and
 * MCP's `query-docs` over the streamable HTTP endpoint, for keyword, semantic and hybrid search (the tiny model,
 * fakes/tiny-model.ts, embeds with 384 dimensions), with 1 and 16 concurrent clients, over a generated framework
 * documentation of about 1,500 snippets indexed through the real pipeline. Each cell is measured BENCH_RUNS times
 * (default 3) in turn and its median p50 and p95 printed, with the median answer size; then the median of each
 * Server-Timing phase the server reported (1 client), which says where an answer's time goes. BENCH_MODES and
 * BENCH_TRANSPORTS (comma-separated: json, txt, mcp) measure only those.
 */
export async function api(): Promise<void> {
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-bench-api-'));
  await fs.chmod(dir, 0o755);
  const corpus = path.join(dir, 'corpus', 'webframe');
  await generateDocs(corpus);
  const model = await buildTinyModel(path.join(dir, 'model'), { hidden: 384 });
  const [port, pgPort, tPort, uiPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const config = loadConfig({
    DATA_DIR: path.join(dir, 'data'),
    PORT: String(port),
    EMBEDDED_POSTGRES_PORT: String(pgPort),
    TEMPORAL_PORT: String(tPort),
    TEMPORAL_UI_PORT: String(uiPort),
    LOG_LEVEL: 'warn',
    LOCAL_SOURCE_ROOTS: path.dirname(corpus),
    EMBEDDING_ALLOW_DOWNLOADS: 'false',
    ...(process.env.TEMPORAL_CLI && { TEMPORAL_CLI: process.env.TEMPORAL_CLI }),
  });
  const stack = await startStack({ config, log: createLogger('warn'), api: true, queues: TASK_QUEUE_NAMES, services: 'embedded' });
  const url = stack.api!.url;
  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(url + p, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    if (res.status >= 400) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const clients: Client[] = [];
  try {
    const profile = { id: 'tiny', name: 'tiny test model', provider: 'local-transformers', model: 'tiny-bert', config: { modelPath: model.path }, default: true };
    await call('PUT', '/api/v1/settings/embedding', { profile });
    const t0 = performance.now();
    const { library } = await call('POST', '/api/v1/libs', { source: 'local', sourceUrl: corpus });
    for (;;) {
      const { jobs } = await call('GET', '/api/v1/jobs?limit=50');
      const failed = (jobs as { status: string; error: string | null }[]).find((j) => j.status === 'failed' || j.status === 'cancelled');
      if (failed) throw new Error(`an indexing job ${failed.status}: ${failed.error}`);
      if ((jobs as { status: string }[]).every((j) => j.status === 'done')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const lib = library.id as string;
    const [{ n }] = (await stack.orm.em.fork().execute('select count(*)::int as n from snippet where repository_id = ?', [lib])) as [{ n: number }];
    console.log(`machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model}, node ${process.version}`);
    console.log(`library: ${n} snippets, indexed and embedded (tiny model) in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${runs} run(s) per cell, medians shown`);

    for (let c = 0; c < 16; c++) {
      const client = new Client({ name: `bench-${c}`, version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      clients.push(client);
    }
    const asksFor = (transport: Transport, mode: string, count: number): Ask[] =>
      clients.slice(0, count).map((client) => (transport === 'mcp' ? mcpAsk(client, lib, mode) : httpAsk(url, lib, mode, transport)));
    const modes = (process.env.BENCH_MODES ?? 'keyword,semantic,hybrid').split(',');
    const transports = (process.env.BENCH_TRANSPORTS ?? 'json,txt,mcp').split(',') as Transport[];
    // Warm-up: the vectors into the cache, the model into its thread, the connections opened.
    for (const mode of modes) for (const t of transports) await measure(asksFor(t, mode, 1), QUERIES.length);

    console.log(`\n| transport | mode | clients | p50 ms | p95 ms | answer bytes |\n|---|---|---|---|---|---|`);
    const phases = new Map<string, Map<string, number[]>>();
    for (const transport of transports) {
      for (const mode of modes) {
        for (const count of [1, 16]) {
          const cells: Cell[] = [];
          for (let r = 0; r < runs; r++) cells.push(await measure(asksFor(transport, mode, count), count === 1 ? 40 : 5));
          const p50 = median(cells.map((x) => pct(x.times, 50)));
          const p95 = median(cells.map((x) => pct(x.times, 95)));
          const bytes = median(cells.flatMap((x) => x.bytes));
          const label = transport === 'mcp' ? 'MCP query-docs' : `GET /api/v1/context ${transport}`;
          console.log(`| ${label} | ${mode} | ${count} | ${p50.toFixed(1)} | ${p95.toFixed(1)} | ${bytes} |`);
          if (count === 1 && transport !== 'mcp') {
            const row = new Map<string, number[]>();
            for (const x of cells) for (const [name, ms] of x.phases) row.set(name, [...(row.get(name) ?? []), ...ms]);
            phases.set(`${transport} ${mode}`, row);
          }
        }
      }
    }
    console.log('\nServer-Timing phase medians, 1 client (ms):');
    for (const [label, row] of phases) {
      console.log(`  ${label.padEnd(14)} ${[...row].map(([name, ms]) => `${name} ${median(ms).toFixed(2)}`).join('  ')}`);
    }
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await stack.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
