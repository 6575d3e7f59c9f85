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

/** Keeps the last lines a process printed, for error messages. */
export function tail(child: ChildProcess, lines = 30): () => string {
  const buf: string[] = [];
  const push = (chunk: Buffer) => {
    buf.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (buf.length > lines) buf.splice(0, buf.length - lines);
  };
  child.stdout?.on('data', push);
  child.stderr?.on('data', push);
  return () => buf.join('\n');
}
