import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { freePort } from '../../fakes/ports.js';
import { printed } from '../../runtime/processes.js';
import { startDevServer } from '../../runtime/temporal.js';

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
