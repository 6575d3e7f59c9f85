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

/** A process as /proc/<pid>/stat tells it: its name, its parent, and its CPU in ms, its own and its reaped children's. */
export interface ProcStat {
  name: string;
  ppid: number;
  ownMs: number;
  childrenMs: number;
}

/**
 * Every process's stat by pid, read from /proc (a process that exits meanwhile is left out); throws where there is no
 * /proc. Also the indexing benchmark's (bench/index.ts).
 */
export async function procStats(): Promise<Map<number, ProcStat>> {
  const stats = new Map<number, ProcStat>();
  for (const pid of (await fs.readdir('/proc')).filter((d) => /^\d+$/.test(d))) {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    // Fields after the command name (which may hold spaces), from field 3 on: ppid is field 4, utime 14, cutime 16.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    stats.set(Number(pid), {
      name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      ppid: Number(f[1]),
      ownMs: (Number(f[11]) + Number(f[12])) * TICK_MS,
      childrenMs: (Number(f[13]) + Number(f[14])) * TICK_MS,
    });
  }
  return stats;
}

/** The embedded PostgreSQL's CPU so far, in ms (its postmaster's pid is the first line of postmaster.pid). */
export async function postgresCpuMs(clusterDir: string): Promise<number> {
  let pid: number;
  try {
    pid = Number((await fs.readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  } catch {
    return NaN;
  }
  const stats = await procStats();
  const postmaster = stats.get(pid);
  let ms = postmaster ? postmaster.ownMs + postmaster.childrenMs : 0;
  for (const p of stats.values()) if (p.ppid === pid) ms += p.ownMs;
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
