import fs from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * CPU time spent by this Node process (all its threads) and by an embedded PostgreSQL (the postmaster, its live
 * backends, and the children it has reaped), for figures per query that machine noise does not move the way it moves
 * latency: other work on a shared machine delays a query but does not add to its CPU.
 */

/** Linux clock ticks per second (`getconf CLK_TCK`; 100 on every common kernel). */
const TICK_MS = 10;

/** utime + stime (+ cutime + cstime when `children`) of a process from /proc/<pid>/stat, in ms; 0 when it is gone. */
async function procCpuMs(pid: number, children: boolean): Promise<number> {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), from field 3 on: utime is field 14, cutime 16.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
    return ticks * TICK_MS;
  } catch {
    return 0;
  }
}

async function childrenOf(pid: number): Promise<number[]> {
  const out: number[] = [];
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await fs.readFile(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

/** The embedded PostgreSQL's CPU so far, in ms (its postmaster's pid is the first line of postmaster.pid). */
export async function postgresCpuMs(clusterDir: string): Promise<number> {
  let pid: number;
  try {
    pid = Number((await fs.readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  } catch {
    return NaN;
  }
  let ms = await procCpuMs(pid, true);
  for (const child of await childrenOf(pid)) ms += await procCpuMs(child, false);
  return ms;
}

export interface CpuSample {
  node: number;
  /** Of which in the kernel (system calls: sockets, thread wake-ups). */
  nodeSystem: number;
  postgres: number;
}

/**
 * A sample at the `start` or `end` of what is measured. Reading /proc for PostgreSQL's processes costs this process
 * some CPU too (about 100 ms with a few hundred processes): it is read before Node's own figure at the start and
 * after it at the end, so it is not counted.
 */
export async function cpuSample(clusterDir: string, at: 'start' | 'end'): Promise<CpuSample> {
  const postgres = at === 'start' ? await postgresCpuMs(clusterDir) : NaN;
  const u = process.cpuUsage();
  return { node: (u.user + u.system) / 1000, nodeSystem: u.system / 1000, postgres: at === 'end' ? await postgresCpuMs(clusterDir) : postgres };
}

/** `CPU/query node 3.10 (system 0.80) + pg 1.20 ms, load 1.50` for the queries between two samples. */
export function cpuPerQuery(from: CpuSample, to: CpuSample, queries: number): string {
  const per = (a: number, b: number) => ((b - a) / queries).toFixed(2);
  return `CPU/query node ${per(from.node, to.node)} (system ${per(from.nodeSystem, to.nodeSystem)}) + pg ${per(from.postgres, to.postgres)} ms, load ${os.loadavg()[0]!.toFixed(2)}`;
}

/** Starts the V8 profiler on the main thread; the function returned stops it and writes the profile (BENCH_CPU_PROFILE). */
export async function startProfile(): Promise<(file: string) => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async (file) => {
    const { profile } = await session.post('Profiler.stop');
    await fs.writeFile(file, JSON.stringify(profile));
    session.disconnect();
  };
}
