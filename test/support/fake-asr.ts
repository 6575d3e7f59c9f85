/**
 * A fake transcription backend that speaks the whole contract Gristmill expects (README, "The transcription
 * backend"). The tests drive it; it also runs on its own for demos:
 *
 *   npm run fake-asr -- --port 9000 [--load-seconds 5] [--delay-ms 500]
 *   ASR_BASE_URL=http://127.0.0.1:9000 npm start
 *
 * - POST /jobs (multipart: file, callback_url, external_id): 202 {id, status: "queued"}; 503 + Retry-After while
 *   the model is loading.
 * - GET /model/events: server-sent events `event: model` with `{state}` (`loading`, `ready`), the current state
 *   first. Switches make it unreachable (500) or close without a ready message.
 * - DELETE /jobs/:id: cancels (recorded); GET /jobs/:id: the job.
 * - Callbacks: the backend job `{id, status, error?, segments?}` POSTed to callback_url, on demand (tests) or
 *   after `delayMs` (auto mode), plus model-lifecycle notices and replays on demand.
 */
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { Busboy } from '@fastify/busboy';

export interface FakeSubmission {
  id: string;
  callbackUrl: string;
  externalId: string;
  fileName: string;
  fileType: string;
  bytes: number;
  sha256: string;
  /** The file starts with a RIFF/WAVE header. */
  isWav: boolean;
  status: 'queued' | 'completed' | 'failed' | 'cancelled';
}

export interface Attempt {
  status: number;
  bytes: number;
  sha256: string;
  at: number;
}

export interface Segment {
  start: number;
  end: number;
  text: string;
}

export type ModelEventsMode = 'live' | 'unreachable' | 'close-without-ready';

export class FakeAsr {
  url = '';
  /** Accepted submissions. */
  readonly jobs: FakeSubmission[] = [];
  /** Every POST /jobs, 503s included. */
  readonly attempts: Attempt[] = [];
  readonly cancels: string[] = [];
  /** Connections made to /model/events. */
  modelEventConnections = 0;
  model: 'ready' | 'loading' = 'ready';
  retryAfterSeconds = 1;
  modelEvents: ModelEventsMode = 'live';
  /** Auto mode: post a result this long after accepting a job; undefined: the test posts callbacks itself. */
  autoCompleteMs: number | undefined;
  /** What auto mode posts. */
  result: (job: FakeSubmission) => Record<string, unknown> = (job) => ({ id: job.id, status: 'completed', segments: demoSegments(job) });
  /** Authorization header expected on every request, when set. */
  apiKey: string | undefined;
  readonly callbacks: { jobId: string; status: number; body: unknown; at: number }[] = [];

  private server: http.Server | undefined;
  private readonly sse = new Set<http.ServerResponse>();
  private waiters: (() => void)[] = [];

  static async start(o: { port?: number; host?: string } = {}): Promise<FakeAsr> {
    const f = new FakeAsr();
    f.server = http.createServer((req, res) => {
      f.handle(req, res).catch((err: Error) => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: err.message }));
      });
    });
    await new Promise<void>((r) => f.server!.listen(o.port ?? 0, o.host ?? '127.0.0.1', r));
    f.url = `http://${o.host ?? '127.0.0.1'}:${(f.server.address() as { port: number }).port}`;
    return f;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  async waitFor<T>(what: () => T | undefined | false, timeoutMs = 20_000, label = 'condition'): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = what();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`fake ASR: timed out waiting for ${label}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  /** The accepted submission of Gristmill job `jobId` (the latest one). */
  waitForJob(jobId: string, timeoutMs?: number): Promise<FakeSubmission> {
    return this.waitFor(() => this.jobs.filter((j) => j.externalId === jobId).at(-1), timeoutMs, `a submission of ${jobId}`);
  }

  /** Sets the model's state and tells every /model/events client. */
  setModel(state: 'ready' | 'loading'): void {
    this.model = state;
    for (const res of this.sse) res.write(`event: model\ndata: ${JSON.stringify({ state })}\n\n`);
  }

  /** POSTs `body` to the job's callback URL (or `url`), as the backend does. */
  async callback(job: FakeSubmission, body: unknown, url = job.callbackUrl): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = { raw: text };
    }
    this.callbacks.push({ jobId: job.id, status: res.status, body: parsed, at: Date.now() });
    return { status: res.status, body: parsed };
  }

  complete(job: FakeSubmission, segments: unknown = demoSegments(job)) {
    job.status = 'completed';
    return this.callback(job, { id: job.id, status: 'completed', segments });
  }

  fail(job: FakeSubmission, error?: string, status: 'failed' | 'cancelled' = 'failed') {
    job.status = status;
    return this.callback(job, { id: job.id, status, ...(error !== undefined && { error }) });
  }

  /** A model-lifecycle notice to the job's callback URL: must never finish the job. */
  modelLifecycle(job: FakeSubmission) {
    return this.callback(job, { event: 'model.loaded', model: 'fake-whisper-large', state: 'ready', status: 'model_loaded' });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    if (this.apiKey && req.headers.authorization !== `Bearer ${this.apiKey}`) {
      res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    if (req.method === 'POST' && url.pathname === '/jobs') return this.submit(req, res);
    if (req.method === 'GET' && url.pathname === '/model/events') return this.events(req, res);
    const m = /^\/jobs\/([^/]+)$/.exec(url.pathname);
    const job = m ? this.jobs.find((j) => j.id === decodeURIComponent(m[1]!)) : undefined;
    if (m && req.method === 'DELETE') {
      this.cancels.push(decodeURIComponent(m[1]!));
      this.wake();
      if (!job) {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'no such job' }));
        return;
      }
      job.status = 'cancelled';
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ id: job.id, status: 'cancelled' }));
      return;
    }
    if (m && req.method === 'GET' && job) {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(job));
      return;
    }
    res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
  }

  private async submit(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const fields: Record<string, string> = {};
    const file = { name: '', type: '', bytes: 0, hash: createHash('sha256'), head: Buffer.alloc(0) };
    await new Promise<void>((resolve, reject) => {
      const bb = Busboy({ headers: req.headers as { 'content-type': string } });
      bb.on('field', (name: string, value: string) => {
        fields[name] = value;
      });
      bb.on('file', (_field: string, stream: NodeJS.ReadableStream, filename: string, _enc: string, type: string) => {
        file.name = filename;
        file.type = type;
        stream.on('data', (c: Buffer) => {
          if (file.head.length < 12) file.head = Buffer.concat([file.head, c]).subarray(0, 12);
          file.bytes += c.length;
          file.hash.update(c);
        });
      });
      bb.on('finish', resolve);
      bb.on('error', reject);
      req.pipe(bb);
    });
    const sha256 = file.hash.digest('hex');
    if (this.model !== 'ready') {
      this.attempts.push({ status: 503, bytes: file.bytes, sha256, at: Date.now() });
      this.wake();
      res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': String(this.retryAfterSeconds) });
      res.end(JSON.stringify({ error: 'model loading', state: this.model }));
      return;
    }
    if (!fields.callback_url || !file.bytes) {
      this.attempts.push({ status: 400, bytes: file.bytes, sha256, at: Date.now() });
      res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'file and callback_url are required' }));
      return;
    }
    const job: FakeSubmission = {
      id: `asr-${randomUUID().slice(0, 8)}`,
      callbackUrl: fields.callback_url,
      externalId: fields.external_id ?? '',
      fileName: file.name,
      fileType: file.type,
      bytes: file.bytes,
      sha256,
      isWav: file.head.subarray(0, 4).toString('latin1') === 'RIFF' && file.head.subarray(8, 12).toString('latin1') === 'WAVE',
      status: 'queued',
    };
    this.attempts.push({ status: 202, bytes: file.bytes, sha256, at: Date.now() });
    this.jobs.push(job);
    this.wake();
    res.writeHead(202, { 'Content-Type': 'application/json' }).end(JSON.stringify({ id: job.id, status: 'queued' }));
    if (this.autoCompleteMs !== undefined) {
      setTimeout(() => {
        if (job.status !== 'queued') return;
        const body = this.result(job);
        job.status = body.status === 'failed' ? 'failed' : 'completed';
        void this.callback(job, body).catch(() => undefined);
      }, this.autoCompleteMs);
    }
  }

  private events(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.modelEventConnections++;
    this.wake();
    if (this.modelEvents === 'unreachable') {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end('model events are down');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.write(`: fake asr\n\n`);
    res.write(`event: model\ndata: ${JSON.stringify({ state: this.model })}\n\n`);
    if (this.modelEvents === 'close-without-ready') {
      res.write(`event: model\ndata: ${JSON.stringify({ state: 'loading', progress: 50 })}\n\n`);
      res.end();
      return;
    }
    this.sse.add(res);
    req.on('close', () => this.sse.delete(res));
  }

  async close(): Promise<void> {
    for (const res of this.sse) res.end();
    this.sse.clear();
    this.server?.closeAllConnections();
    await new Promise<void>((r) => this.server?.close(() => r()));
  }
}

/** Segments for a submission: one per 2 s of its (16 kHz mono 16-bit) audio, with a rolling echo between each pair. */
export function demoSegments(job: Pick<FakeSubmission, 'bytes'>): Segment[] {
  const seconds = Math.max(2, Math.round((job.bytes - 44) / 32_000));
  const out: Segment[] = [];
  for (let t = 0, i = 1; t < seconds; t += 2, i++) {
    out.push({ start: t, end: t + 1.9, text: `sentence number ${i} of the demo` });
    out.push({ start: t + 1.9, end: t + 2, text: `of the demo` });
  }
  return out;
}

/** `npm run fake-asr -- --port 9000 --load-seconds 5 --delay-ms 500`: a backend for demos. */
async function main(): Promise<void> {
  const arg = (name: string, fallback: number) => {
    const i = process.argv.indexOf(`--${name}`);
    return i === -1 ? fallback : Number(process.argv[i + 1]);
  };
  const fake = await FakeAsr.start({ port: arg('port', 9000) });
  fake.autoCompleteMs = arg('delay-ms', 500);
  const loadSeconds = arg('load-seconds', 0);
  if (loadSeconds > 0) {
    fake.setModel('loading');
    fake.retryAfterSeconds = Math.max(1, Math.ceil(loadSeconds / 2));
    setTimeout(() => fake.setModel('ready'), loadSeconds * 1000);
  }
  console.log(`fake transcription backend on ${fake.url} (ASR_BASE_URL=${fake.url})`);
  process.on('SIGINT', () => void fake.close().then(() => process.exit(0)));
  process.on('SIGTERM', () => void fake.close().then(() => process.exit(0)));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
