import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';

/**
 * Child servers (the Temporal dev server) run in their own process group so that we stop them in order on
 * Ctrl-C; if this process dies without that, the exit hook still kills them: no stray process is left behind.
 */
const children = new Set<ChildProcess>();
let hooked = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

export function spawnManaged(command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true });
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const c of children) killGroup(c, 'SIGKILL');
    });
  }
  return child;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
export async function stopManaged(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killGroup(child, 'SIGTERM');
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * Keeps what a process printed, for error messages: its first lines and its last ones. A Go server that fails to
 * start (the Temporal dev server) prints the cause first and then a stack of every goroutine, so the last lines alone
 * lost the cause. Lines are joined across chunks, and blank ones dropped.
 */
export function printed(child: ChildProcess, opts: { first?: number; last?: number } = {}): () => string {
  const first = opts.first ?? 10;
  const last = opts.last ?? 30;
  const head: string[] = [];
  const tail: string[] = [];
  let dropped = 0;
  const partial = { stdout: '', stderr: '' };
  const keep = (line: string) => {
    if (!line.trim()) return;
    if (head.length < first) {
      head.push(line);
      return;
    }
    tail.push(line);
    if (tail.length > last) {
      tail.shift();
      dropped++;
    }
  };
  const on = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    const lines = (partial[stream] + chunk.toString('utf8')).split('\n');
    partial[stream] = (lines.pop() ?? '').slice(-4096); // a line that never ends is kept to its last 4 KB
    lines.forEach(keep);
  };
  child.stdout?.on('data', on('stdout'));
  child.stderr?.on('data', on('stderr'));
  return () => {
    const pending = [partial.stdout, partial.stderr].filter((l) => l.trim());
    const lines = [...tail, ...pending];
    const over = Math.max(0, lines.length - last);
    const shown = lines.slice(over);
    const skipped = dropped + over;
    return [...head, ...(skipped ? [`... (${skipped} lines)`] : []), ...shown].join('\n');
  };
}
