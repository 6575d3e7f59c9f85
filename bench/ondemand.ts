import { execFile } from 'node:child_process';
import dns from 'node:dns/promises';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLogger } from '../core/log.js';
import { Library } from '../docindex/entities/library.js';
import { freePort } from '../fakes/ports.js';
import { loadConfig } from '../runtime/config.js';
import { startStack } from '../runtime/stack.js';

const run = promisify(execFile);

/**
 * A library nobody registered, answered from: an assistant's two MCP calls as a new user would make them, against
 * the real npm registry this machine reaches (found through npm's own `registry` setting; its address is allowed
 * for the run with OUTBOUND_ALLOW, as an operator would). `resolve-library-id` registers the package on its miss;
 * `query-docs` is asked again while it answers INDEXING_IN_PROGRESS (each call waits up to INDEX_ON_DEMAND_WAIT_MS).
 * Reports, per package (BENCH_PACKAGES, default `fastify,zod,commander`): the time of each call, the time to the first
 * answer with documentation, and the files and snippets indexed. Keyword search only: no model is downloaded.
 */
export async function ondemand(): Promise<void> {
  const packages = (process.env.BENCH_PACKAGES ?? 'fastify,zod,commander').split(',').map((p) => p.trim()).filter(Boolean);
  const questions: Record<string, string> = { fastify: 'how do I register a route with a schema', zod: 'validate an object schema', commander: 'define a command with options' };
  const log = createLogger('warn', 'bench');
  const registry = new URL((await run('npm', ['config', 'get', 'registry'])).stdout.trim());
  const addresses = (await dns.lookup(registry.hostname, { all: true })).map((a) => a.address);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-bench-'));
  await fs.chmod(dir, 0o755);
  const [port, pgPort, temporalPort, uiPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const config = loadConfig({
    DATA_DIR: path.join(dir, 'data'),
    PORT: String(port),
    EMBEDDED_POSTGRES_PORT: String(pgPort),
    TEMPORAL_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(uiPort),
    LOG_LEVEL: 'warn',
    OUTBOUND_ALLOW: addresses.join(','),
    INDEX_ON_DEMAND_REGISTRIES: 'npm',
    EMBEDDING_ALLOW_DOWNLOADS: 'false',
    ...(process.env.TEMPORAL_CLI && { TEMPORAL_CLI: process.env.TEMPORAL_CLI }),
  });
  // The stack starts its own embedded PostgreSQL and Temporal dev server, as `npm start` does.
  const stack = await startStack({ config, log, api: true, queues: ['indexing'], services: 'embedded' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.api!.url}/mcp`)));
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
    return { text: (r.content as { text: string }[])[0]!.text, isError: r.isError === true };
  };
  try {
    console.log(`machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model}, node ${process.version}; registry from npm's configuration (${addresses.length} address(es) allowed)`);
    console.log('| package | resolve (s) | query-docs calls | first answer (s) | version | files | snippets | read from |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const pkg of packages) {
      const t0 = performance.now();
      const resolved = await call('resolve-library-id', { libraryName: pkg, query: questions[pkg] ?? 'getting started' });
      const tResolve = (performance.now() - t0) / 1000;
      const id = /Context7-compatible library ID: (\S+)/.exec(resolved.text)?.[1];
      if (!id) {
        console.log(`| ${pkg} | ${tResolve.toFixed(1)} | - | not resolved: ${resolved.text.slice(0, 80)} | | | | |`);
        continue;
      }
      let calls = 0;
      let answer = { text: '', isError: true };
      while (answer.isError && performance.now() - t0 < 300_000) {
        calls++;
        answer = await call('query-docs', { libraryId: id, query: questions[pkg] ?? 'getting started' });
        if (answer.isError && !/INDEXING_IN_PROGRESS/.test(answer.text)) break;
      }
      const tAnswer = (performance.now() - t0) / 1000;
      const lib = await stack.orm.em.fork().findOne(Library, { id });
      const [{ files }] = (await stack.orm.em.fork().execute('select count(*)::int as files from library_document where repository_id = ? and version_id is null', [id])) as [{ files: number }];
      // A version read from its package archive is stamped with the version; one read from its repository, with the commit.
      const from = answer.isError ? `failed: ${answer.text.slice(0, 100)}` : lib?.lastCommit === lib?.latestVersion ? 'package archive' : `repository ${lib?.repositoryUrl}`;
      console.log(`| ${pkg} | ${tResolve.toFixed(1)} | ${calls} | ${answer.isError ? 'none' : tAnswer.toFixed(1)} | ${lib?.latestVersion ?? '-'} | ${files} | ${lib?.totalSnippets ?? 0} | ${from} |`);
    }
  } finally {
    await client.close().catch(() => undefined);
    await stack.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
