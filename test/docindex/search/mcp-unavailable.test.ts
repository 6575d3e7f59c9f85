import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../../core/log.js';
import { openOrm, type Orm } from '../../../db/orm.js';
import { createMcpServer } from '../../../docindex/search/mcp.js';
import { freePort } from '../../../fakes/ports.js';
import { readConfig } from '../../../runtime/config.js';
import { databaseSchema } from '../../../runtime/services.js';

// The MCP tools map a dependency that cannot be reached as the REST API does (api/errors.ts, asUnavailable): a stable
// code the assistant can act on, never an internal error id; the database's address and password in no answer, and
// its password in no log line.
const PASSWORD = 's3cretMcpPw';
const lines: string[] = [];
const capture = (scope: string): Logger => {
  const write = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push(`${level} [${scope}] ${msg} ${JSON.stringify(fields ?? {})}`);
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error'), child: (c) => capture(`${scope}:${c}`) };
};

let orm: Orm;
let client: Client;
let address: string;

beforeAll(async () => {
  // A real ORM against a port nobody listens on (free a moment ago): every query fails to connect.
  address = `127.0.0.1:${await freePort()}`;
  orm = await openOrm(`postgres://gristmill:${PASSWORD}@${address}/gristmill`, databaseSchema, undefined, { connect: false });
  const server = createMcpServer({ config: readConfig({}).config, orm, log: capture('mcp') });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
});

afterAll(async () => {
  await client?.close();
  await orm?.close(true);
});

const text = (r: Awaited<ReturnType<Client['callTool']>>) => (r.content as { text: string }[])[0]!.text;

describe('MCP tools while PostgreSQL is away', () => {
  it.each([
    ['query-docs', { libraryId: '/acme/widgets', query: 'routing' }],
    ['resolve-library-id', { libraryName: 'widgets', query: 'routing' }],
  ])('%s answers DATABASE_UNAVAILABLE, not an internal error, naming neither the address nor the password; the log no password', async (name, args) => {
    const before = lines.length;
    const res = await client.callTool({ name, arguments: args });
    expect(res.isError).toBe(true);
    expect(text(res)).toBe('DATABASE_UNAVAILABLE: The database cannot be reached right now; try again shortly');
    const logged = lines.slice(before);
    expect(logged.some((l) => l.startsWith('error [mcp] MCP tool failed'))).toBe(true);
    expect(text(res)).not.toContain(address); // the log names it, for the operator
    for (const line of [text(res), ...logged]) expect(line).not.toContain(PASSWORD);
  });
});
