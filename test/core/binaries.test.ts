import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goBuildCached, type GoBuild } from '../../core/binaries.js';
import { createLogger } from '../../core/log.js';

const log = createLogger('silent');
let tmp: string;

/**
 * A stand-in for `go` on PATH: `go install a/b/cmd/x@v ...` writes a script `x` into GOBIN for each package and
 * counts its runs; `go mod download -json` answers a module folder holding `schema/one.sql`; `go build -o out ./pkg`,
 * run inside a copy of that folder, writes `out`.
 */
function fakeGo(dir: string, moduleDir: string, calls: string): string {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.mkdirSync(path.join(moduleDir, 'schema'), { recursive: true });
  fs.writeFileSync(path.join(moduleDir, 'schema', 'one.sql'), 'select 1;\n');
  fs.writeFileSync(
    path.join(bin, 'go'),
    `#!/bin/sh
echo "$*" >> ${calls}
if [ "$1" = install ]; then
  shift
  mkdir -p "$GOBIN"
  for p in "$@"; do n=\${p%@*}; n=\${n##*/}; printf '#!/bin/sh\\necho %s\\n' "$n" > "$GOBIN/$n"; chmod +x "$GOBIN/$n"; done
elif [ "$1" = mod ]; then
  echo '{"Dir": "${moduleDir}"}'
elif [ "$1" = build ]; then
  test -d schema || exit 3 # run inside the copy of the module
  printf '#!/bin/sh\\necho built\\n' > "$3"; chmod +x "$3"
fi
`,
    { mode: 0o755 },
  );
  return bin;
}

const build: GoBuild = {
  what: 'a test server',
  module: 'example.test/server',
  version: 'v1.2.3',
  commands: { 'test-server': 'cmd/server', 'test-sql-tool': 'cmd/tools/sql' },
  folders: ['schema'],
};

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-gobuild-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('goBuildCached', () => {
  it('builds every command once, renamed, with the module folders beside them, then reuses the cache', async () => {
    const calls = path.join(tmp, 'calls');
    const env = { PATH: `${fakeGo(path.join(tmp, 'go'), path.join(tmp, 'module'), calls)}:/usr/bin:/bin` };
    const dir = path.join(tmp, 'cache', 'test-server', 'v1.2.3');

    expect(await goBuildCached(dir, build, log, env)).toBe(dir);
    expect(fs.readFileSync(calls, 'utf8').trim().split('\n')).toEqual([
      'install example.test/server/cmd/server@v1.2.3 example.test/server/cmd/tools/sql@v1.2.3',
      'mod download -json example.test/server@v1.2.3',
    ]);
    expect(fs.readdirSync(dir).sort()).toEqual(['schema', 'test-server', 'test-sql-tool']);
    expect(fs.readFileSync(path.join(dir, 'schema', 'one.sql'), 'utf8')).toBe('select 1;\n');
    // No half-built folder is left beside the cache entry.
    expect(fs.readdirSync(path.dirname(dir))).toEqual(['v1.2.3']);

    await goBuildCached(dir, build, log, env);
    expect(fs.readFileSync(calls, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('builds inside a writable copy of the module when go install refuses it (asMainModule), leaving no copy behind', async () => {
    const calls = path.join(tmp, 'calls-main');
    const env = { PATH: `${fakeGo(path.join(tmp, 'go-main'), path.join(tmp, 'module-main'), calls)}:/usr/bin:/bin` };
    const dir = path.join(tmp, 'cache-main', 'compose', 'v1.2.3');
    expect(await goBuildCached(dir, { ...build, folders: [], commands: { 'test-compose': 'cmd' }, asMainModule: true }, log, env)).toBe(dir);
    const [download, compile] = fs.readFileSync(calls, 'utf8').trim().split('\n');
    expect(download).toBe('mod download -json example.test/server@v1.2.3');
    expect(compile).toMatch(/^build -o \S+\/test-compose \.\/cmd$/);
    expect(execFileSync(path.join(dir, 'test-compose')).toString()).toBe('built\n');
    expect(fs.readdirSync(dir)).toEqual(['test-compose']);
    expect(fs.readdirSync(path.dirname(dir))).toEqual(['v1.2.3']);
  });

  it('says how to get the programs when Go is missing', async () => {
    const dir = path.join(tmp, 'nogo', 'v1.2.3');
    await expect(goBuildCached(dir, build, log, { PATH: path.join(tmp, 'empty') })).rejects.toThrow(
      /a test server is not in .*nogo\/v1\.2\.3 and Go is not installed[\s\S]*go build -o .*test-server example\.test\/server\/cmd\/server@v1\.2\.3/,
    );
  });
});
