import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { freePort } from '../../fakes/ports.js';
import { printed } from '../../runtime/processes.js';
import { devServerArgs, findTemporalCli, startDevServer, waitForTemporal } from '../../runtime/temporal.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-processes-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A script that fails as a Go server does: the cause on its first line, then a long stack, some of it in pieces. */
const failingServer = `
  process.stderr.write('panic: listen tcp 127.0.0.1:7243: bind: address already in use\\n\\ngoroutine 1 [running]:\\n');
  for (let i = 0; i < 200; i++) process.stderr.write('frame ' + i + '\\n\\t/go/src/server.go:' + i + '\\n');
  process.stderr.write('last fr');
  setTimeout(() => { process.stderr.write('ame\\n'); process.exit(2); }, 20);
`;

describe('printed', () => {
  it("keeps a process's first lines and its last ones, joining lines split across writes", async () => {
    const child = spawn(process.execPath, ['-e', failingServer], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = printed(child, { first: 2, last: 3 });
    await once(child, 'close');
    expect(output().split('\n')).toEqual([
      'panic: listen tcp 127.0.0.1:7243: bind: address already in use',
      'goroutine 1 [running]:',
      '... (398 lines)',
      'frame 199',
      '\t/go/src/server.go:199',
      'last frame',
    ]);
  });

  it('shows everything, with no marker, when it printed little', async () => {
    const child = spawn(process.execPath, ['-e', "console.log('one'); console.error('two')"], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = printed(child);
    await once(child, 'close');
    expect(output().split('\n').sort()).toEqual(['one', 'two']);
  });
});

describe('startDevServer', () => {
  it("says why the dev server would not start: the cause it printed first, not only its stack's end", async () => {
    const cli = path.join(tmp, 'temporal');
    fs.writeFileSync(cli, `#!${process.execPath}\n${failingServer}`, { mode: 0o755 });
    const port = await freePort();
    const started = startDevServer({ cli, stateDir: path.join(tmp, 'state'), port, uiPort: 0, headless: true, namespace: 'default', log: createLogger('error', 'test') });
    const err = (await started.catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/^The Temporal dev server exited \(code 2\)\. A port it needs is in use/);
    expect(err.message).toContain('panic: listen tcp 127.0.0.1:7243: bind: address already in use');
    expect(err.message).toContain('last frame');
  });
});

describe('the dev server\'s state', () => {
  // runtime/temporal.ts: a write-ahead log synced at checkpoints. What it accepted is in the file before it answers, so
  // killing the server outright loses none of it.
  it.skipIf(process.env.TEMPORAL_ADDRESS)('is a write-ahead-logged SQLite file, and keeps what the server accepted when it is killed', async () => {
    const cli = await findTemporalCli(createLogger('error', 'test'), { explicit: process.env.TEMPORAL_CLI });
    const stateDir = path.join(tmp, 'killed');
    fs.mkdirSync(stateDir);
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    const serve = () => spawn(cli, devServerArgs({ stateDir, port, uiPort: 0, headless: true, namespace: 'default' }), { stdio: 'ignore' });
    const withClient = async <T>(fn: (client: Client) => Promise<T>): Promise<T> => {
      await waitForTemporal(address, { timeoutMs: 60_000 });
      const connection = await Connection.connect({ address });
      try {
        return await fn(new Client({ connection }));
      } finally {
        await connection.close();
      }
    };
    let server = serve();
    try {
      const ids = await withClient((client) =>
        Promise.all(Array.from({ length: 5 }, (_, i) => client.workflow.start('noSuchWorkflow', { taskQueue: 'nobody-polls', workflowId: `kept-${i}` }).then((h) => h.firstExecutionRunId))),
      );
      server.kill('SIGKILL');
      await once(server, 'exit');
      server = serve();
      const kept = await withClient((client) => Promise.all(ids.map(async (runId, i) => (await client.workflow.getHandle(`kept-${i}`, runId).describe()).status.name)));
      expect(kept).toEqual(Array(5).fill('RUNNING'));
      // The database header's file format versions (bytes 18 and 19) are 2 in WAL mode, 1 with a rollback journal.
      const header = Buffer.alloc(20);
      const fd = fs.openSync(path.join(stateDir, 'temporal.db'), 'r');
      fs.readSync(fd, header, 0, 20, 0);
      fs.closeSync(fd);
      expect([header[18], header[19]]).toEqual([2, 2]);
    } finally {
      // Gone before afterAll removes its state directory.
      if (server.exitCode === null && server.signalCode === null) {
        server.kill('SIGKILL');
        await once(server, 'exit');
      }
    }
  }, 120_000);
});
