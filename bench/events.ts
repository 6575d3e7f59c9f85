import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import { streamEvents } from '../api/sse.js';
import { createLogger } from '../core/log.js';
import { migrate } from '../db/orm.js';
import { openDatabase } from '../runtime/database.js';
import { appendEvent } from '../jobs/events.js';
import { EventHub } from '../jobs/hub.js';
import { startEmbeddedPostgres } from '../runtime/postgres.js';

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/**
 * The job-progress path: how fast state changes with their events commit, and how long from commit until an SSE
 * client has the event, with many clients on one stream.
 */
export async function events(): Promise<void> {
  const log = createLogger('warn');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-bench-'));
  await fs.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: dir, port: 54000 + Math.floor(Math.random() * 1000), log });
  const orm = await openDatabase(pg.url);
  await migrate(orm, pg.url);
  const hub = new EventHub(pg.url, () => orm.em.fork(), log);
  await hub.start();
  try {
    console.log(`machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model}, node ${process.version}`);

    // 1. Append throughput: one transaction per event, each to 3 streams (job, kind, topic), as a job update does.
    for (const writers of [1, 4, 16]) {
      const perWriter = 400;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          for (let i = 0; i < perWriter; i++) {
            await orm.em.fork().transactional((tx) => appendEvent(tx, [`job:${w}`, 'kind:bench', 'repo:bench'], 'progress', { i }));
          }
        }),
      );
      const s = (performance.now() - t0) / 1000;
      console.log(`append  writers=${writers.toString().padStart(2)}  ${((writers * perWriter) / s).toFixed(0).padStart(6)} events/s (3 streams each)`);
    }

    // 2. Commit -> SSE client latency, with N clients on one stream.
    const app = new Koa();
    app.use((ctx) => streamEvents(ctx, { hub, em: () => orm.em.fork(), stream: 'latency', heartbeatMs: 15_000 }));
    const server = http.createServer(app.callback()).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as { port: number }).port;
    for (const clients of [1, 50, 200]) {
      const sent = new Map<number, number>();
      const lat: number[] = [];
      const total = 200;
      let received = 0;
      const agent = new http.Agent({ maxSockets: clients + 10 });
      const reqs = await Promise.all(
        Array.from({ length: clients }, () =>
          new Promise<http.ClientRequest>((resolve) => {
            const req = http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => {
                for (const m of chunk.matchAll(/data: \{"n":(\d+)\}/g)) {
                  lat.push(performance.now() - sent.get(Number(m[1]))!);
                  received++;
                }
              });
              resolve(req);
            });
          }),
        ),
      );
      await new Promise((r) => setTimeout(r, 200));
      for (let n = 0; n < total; n++) {
        sent.set(n, performance.now()); // before the write: the figure is write + commit + delivery
        await orm.em.fork().transactional((tx) => appendEvent(tx, ['latency'], 'tick', { n }));
        await new Promise((r) => setTimeout(r, 5));
      }
      const deadline = Date.now() + 10_000;
      while (received < total * clients && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      for (const r of reqs) r.destroy();
      agent.destroy();
      console.log(
        `deliver clients=${clients.toString().padStart(3)}  received ${received}/${total * clients}  ` +
          `write->client p50 ${pct(lat, 50).toFixed(1)} ms  p95 ${pct(lat, 95).toFixed(1)} ms  p99 ${pct(lat, 99).toFixed(1)} ms`,
      );
    }
    server.close();
    const mem = process.memoryUsage();
    console.log(`rss ${(mem.rss / 2 ** 20).toFixed(0)} MiB, heap ${(mem.heapUsed / 2 ** 20).toFixed(0)} MiB`);
  } finally {
    await hub.close();
    await orm.close();
    await pg.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
