/**
 * Where a context answer's time goes, for its `Server-Timing` header (docs/api.md, "Server-Timing"): phase names and
 * durations in milliseconds only, nothing of the query, the library or the data. A phase run twice (or run by two
 * parallel branches) adds up.
 */
export class Timings {
  private readonly phases = new Map<string, number>();

  add(name: string, ms: number): void {
    this.phases.set(name, (this.phases.get(name) ?? 0) + ms);
  }

  /** The header's value: `resolve;dur=1.2, keyword;dur=3.4, ...`, in the order the phases first ran. */
  header(): string {
    return [...this.phases].map(([name, ms]) => `${name};dur=${ms.toFixed(1)}`).join(', ');
  }

  /** Each phase's milliseconds (benchmarks read them back from the header with parseServerTiming). */
  entries(): [string, number][] {
    return [...this.phases];
  }
}

/** Runs `work` as phase `name` of `timings` (when there is one to keep). */
export async function timed<T>(timings: Timings | undefined, name: string, work: () => Promise<T>): Promise<T> {
  if (!timings) return work();
  const t0 = performance.now();
  try {
    return await work();
  } finally {
    timings.add(name, performance.now() - t0);
  }
}

/** As `timed`, for work that does not wait. */
export function timedSync<T>(timings: Timings | undefined, name: string, work: () => T): T {
  if (!timings) return work();
  const t0 = performance.now();
  try {
    return work();
  } finally {
    timings.add(name, performance.now() - t0);
  }
}

/** A `Server-Timing` value read back: phase name -> milliseconds (entries without `dur` are left out). */
export function parseServerTiming(header: string | null): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of (header ?? '').split(',')) {
    const [name, ...params] = entry.trim().split(';');
    const dur = params.map((p) => /^\s*dur=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean);
    if (name && dur) out.set(name, Number(dur));
  }
  return out;
}
