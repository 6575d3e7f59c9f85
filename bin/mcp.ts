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

const stdoutWrite = process.stdout.write.bind(process.stdout);
const protocolOut = new Writable({
  write(chunk: Buffer | string, _encoding, callback) {
    stdoutWrite(chunk, (err?: Error | null) => callback(err ?? null));
  },
});
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;

await runMain('gristmill-mcp', async (config, log) => {
  const url = await attachedDatabaseUrl(config);
  const orm = await openDatabase(url, log.child('db'));
  await migrate(orm, url, log);
  const server = createMcpServer({ config, orm, log });
  await server.connect(new StdioServerTransport(process.stdin, protocolOut));
  // The client closing our stdin is the end of the session.
  process.stdin.once('end', () => process.kill(process.pid, 'SIGTERM'));
  return {
    stop: async () => {
      await server.close();
      await closeProviders();
      await closeSearch();
      await orm.close();
    },
  };
});
