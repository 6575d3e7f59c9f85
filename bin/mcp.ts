/**
 * `npm run mcp`: the MCP server over stdio (tools resolve-library-id and query-docs), attached to the database a
 * local `npm start` runs, or to DATABASE_URL. stdout carries the protocol only: every log line goes to stderr.
 */
import { Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { migrate } from '../db/orm.js';
import { openDatabase } from '../runtime/database.js';
import { closeProviders } from '../docindex/embeddings/profiles.js';
import { closeSearch } from '../docindex/search/search.js';
import { runMain } from '../runtime/main.js';
import { attachedDatabaseUrl } from '../runtime/stack.js';
import { createMcpServer } from '../docindex/search/mcp.js';
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import { onDemand } from '../docindex/on-demand.js';
import { JobKinds } from '../jobs/kinds.js';
import { JobStore } from '../jobs/store.js';
import { jobKinds } from '../runtime/services.js';

const stdoutWrite = process.stdout.write.bind(process.stdout);
const protocolOut = new Writable({
  write(chunk: Buffer | string, _encoding, callback) {
    stdoutWrite(chunk, (err?: Error | null) => callback(err ?? null));
  },
});
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;

/** The Temporal client the API would use, or undefined (said on stderr) when no server answers. */
async function connectTemporal(config: Config, log: Logger): Promise<{ connection: Connection; client: Client } | undefined> {
  const address = config.temporalAddress ?? `127.0.0.1:${config.temporalPort}`;
  try {
    const connection = await Connection.connect({ address, connectTimeout: 2000 });
    return { connection, client: new Client({ connection, namespace: config.temporalNamespace }) };
  } catch (err) {
    log.warn('Temporal is not reachable: libraries nobody registered are not indexed on demand from this MCP server', { address, error: (err as Error).message });
    return undefined;
  }
}

await runMain('gristmill-mcp', async (config, log) => {
  const url = await attachedDatabaseUrl(config);
  const orm = await openDatabase(url, log.child('db'));
  await migrate(orm, url, log);
  // With Temporal reachable, a search may register and index what nobody registered, as over HTTP; without it the
  // server only reads what is indexed.
  const temporal = await connectTemporal(config, log);
  const jobs = new JobStore(new JobKinds(jobKinds));
  const server = createMcpServer({ config, orm, log, ...(temporal && { onDemand: onDemand({ config, orm, log, jobs, temporal: temporal.client }) }) });
  await server.connect(new StdioServerTransport(process.stdin, protocolOut));
  // The client closing our stdin is the end of the session.
  process.stdin.once('end', () => process.kill(process.pid, 'SIGTERM'));
  return {
    stop: async () => {
      await server.close();
      await temporal?.connection.close();
      await closeProviders();
      await closeSearch();
      await orm.close();
    },
  };
});
