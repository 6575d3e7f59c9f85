import { describe, expect, it } from 'vitest';
import { errorBound, quantizeQuery, quantizeRow, ROW_MAX } from '../../../docindex/search/quantize.js';
import { bestRows, layoutBytes, rowViews, scanQuery, scanRange, type Layout, type Top } from '../../../docindex/search/scan.js';
import { ScanPool } from '../../../docindex/search/scan-pool.js';
import { bindKernels, LANES_PER_STEP } from '../../../docindex/search/simd.js';
import { Matrix, normalise, topK } from '../../../docindex/search/vectors.js';

/** A repeatable pseudo-random sequence in [-0.5, 0.5). */
function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32 - 0.5;
  };
}
const vector = (next: () => number, dims: number) => Float32Array.from({ length: dims }, next);
const strideOf = (dims: number) => Math.max(LANES_PER_STEP, Math.ceil(dims / LANES_PER_STEP) * LANES_PER_STEP);

/** A laid-out matrix of `rows` (normalised here), as vectors.ts builds it, with one slot. */
function laidOut(rows: Float32Array[], dims: number, batch = 8) {
  const l: Layout = { rows: rows.length, stride: strideOf(dims), slots: 1, batch };
  const pages = Math.ceil(layoutBytes(l) / 65536) || 1;
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  const views = rowViews(memory, l);
  let rowScale = 0;
  rows.forEach((row, i) => {
    const unit = normalise(row);
    views.floats.set(unit, i * l.stride);
    views.scales[i] = quantizeRow(unit, views.int8.subarray(i * l.stride, i * l.stride + dims));
    rowScale = Math.max(rowScale, views.scales[i]!);
  });
  return { l, memory, views, rowScale, k: bindKernels(memory) };
}

/** What scoring every row in float32 answers (the scan before the 8-bit pass): the same kernel, then a full sort. */
function exactTop(m: ReturnType<typeof laidOut>, query: Float32Array, limit: number): Top {
  const { l, views } = m;
  const floats = 4 * l.rows * l.stride;
  const pages = Math.ceil((floats + 4 * l.stride + 4 * l.rows) / 65536);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  new Float32Array(memory.buffer, 0, l.rows * l.stride).set(views.floats);
  new Float32Array(memory.buffer, floats, l.stride).set(normalise(query));
  bindKernels(memory).dots(floats, 0, l.rows, 4 * l.stride, floats + 4 * l.stride);
  const scores = new Float32Array(memory.buffer, floats + 4 * l.stride, l.rows);
  const order = Array.from(scores.keys()).sort((a, b) => scores[b]! - scores[a]! || a - b).slice(0, limit);
  return { rows: Int32Array.from(order), scores: Float32Array.from(order, (r) => scores[r]!) };
}

const scan = (m: ReturnType<typeof laidOut>, queries: Float32Array[], limit: number, start = 0, end = m.l.rows) =>
  scanRange(m.memory, m.k, m.l, 0, queries.map((q) => scanQuery(normalise(q), limit, m.l, m.rowScale)), start, end);

describe('the 8-bit kernel', () => {
  it('computes each query against each row as a scalar loop does, scaled by the row', () => {
    const next = random(7);
    for (const [rows, stride, nq] of [[1, 32, 1], [5, 64, 3], [37, 416, 8], [3, 1536, 2]] as const) {
      const memory = new WebAssembly.Memory({ initial: 4, maximum: 4, shared: true });
      const int8 = new Int8Array(memory.buffer, 0, rows * stride);
      int8.forEach((_, i) => (int8[i] = i % 7 === 0 ? (i % 2 ? 127 : -127) : Math.round(next() * 254)));
      const qsAt = 65536;
      const qs = new Int16Array(memory.buffer, qsAt, nq * stride);
      qs.forEach((_, i) => (qs[i] = i % 5 === 0 ? -1000 : Math.round(next() * 2000)));
      const scalesAt = 2 * 65536;
      const scales = new Float32Array(memory.buffer, scalesAt, rows);
      scales.forEach((_, i) => (scales[i] = 0.5 + next()));
      const outAt = 3 * 65536;
      bindKernels(memory).dots8(qsAt, nq, 0, rows, stride, scalesAt, outAt, 4 * rows);
      const out = new Float32Array(memory.buffer, outAt, nq * rows);
      for (let b = 0; b < nq; b++) {
        for (let r = 0; r < rows; r++) {
          let dot = 0;
          for (let j = 0; j < stride; j++) dot += int8[r * stride + j]! * qs[b * stride + j]!;
          expect(out[b * rows + r]).toBe(Math.fround(Math.fround(dot) * scales[r]!));
        }
      }
    }
  });

  it('keeps the approximate similarity within the error bound of the float32 one', () => {
    const next = random(11);
    for (const dims of [3, 9, 384, 1536]) {
      const rows = Array.from({ length: 200 }, () => vector(next, dims));
      rows.push(Float32Array.from({ length: dims }, (_, i) => (i === 0 ? 1 : 0))); // one large value
      const m = laidOut(rows, dims);
      for (let t = 0; t < 5; t++) {
        const q = normalise(vector(next, dims));
        const sq = scanQuery(q, 1, m.l, m.rowScale);
        const exact = exactTop(m, q, rows.length);
        const byRow = new Map(Array.from(exact.rows, (r, i) => [r, exact.scores[i]!]));
        rows.forEach((_, r) => {
          let dot = 0;
          for (let j = 0; j < dims; j++) dot += m.views.int8[r * m.l.stride + j]! * sq.values[j]!;
          const approx = Math.fround(Math.fround(dot) * m.views.scales[r]!) * sq.scale;
          expect(Math.abs(approx - byRow.get(r)!)).toBeLessThanOrEqual(sq.bound);
        });
      }
    }
  });

  it('quantizes to the int8 and int16 ranges without overflowing 32 bits', () => {
    const out = new Int8Array(4);
    expect(quantizeRow(Float32Array.from([0.5, -0.5, 0.25, 0]), out)).toBeCloseTo(0.5 / ROW_MAX, 9);
    expect([...out]).toEqual([127, -127, 64, 0]);
    expect(quantizeRow(new Float32Array(4), out)).toBe(0);
    const q = quantizeQuery(Float32Array.from([1, -1]), 8192);
    expect(Math.abs(q.values[0]!) * ROW_MAX * 8192).toBeLessThan(2 ** 31);
    expect(errorBound(quantizeQuery(new Float32Array(3), 32), 3, 0)).toBeGreaterThan(0);
  });
});

describe('the best rows of a scan', () => {
  it('keeps the highest scores, ties by the lower row, in any range', () => {
    const next = random(3);
    const scores = Float32Array.from({ length: 300 }, () => Math.round(next() * 20) / 20); // many ties
    for (const [start, end, count] of [[0, 300, 10], [17, 250, 64], [5, 6, 3], [0, 300, 500], [40, 40, 5]] as const) {
      const want = Array.from({ length: end - start }, (_, i) => start + i)
        .sort((a, b) => scores[b]! - scores[a]! || a - b)
        .slice(0, count);
      const got = bestRows(scores, start, end, count);
      expect([...got.rows].sort((a, b) => scores[b]! - scores[a]! || a - b)).toEqual(want);
      expect(got.floor).toBe(want.length ? scores[want[want.length - 1]!] : -Infinity);
    }
  });
});

describe('the scan with rescoring', () => {
  it('answers exactly the float32 best rows, scores and order, at any size', () => {
    const next = random(5);
    for (const [n, dims, limit] of [[1, 384, 10], [37, 9, 37], [37, 9, 100], [1000, 384, 100], [3001, 64, 50], [2000, 1, 20]] as const) {
      const rows = Array.from({ length: n }, () => vector(next, dims));
      if (n > 30) rows[30] = rows[3]!; // a tie: the lower row first
      const m = laidOut(rows, dims);
      for (let t = 0; t < 3; t++) {
        const q = vector(next, dims);
        const [got] = scan(m, [q], limit);
        expect(got).toEqual(exactTop(m, q, limit));
      }
    }
  });

  it('takes more candidates while rows left out could belong, so clustered rows are still exact', () => {
    // Thousands of rows a hair apart: far more score within the 8-bit error of the best 100 than the first candidates.
    const next = random(9);
    const dims = 384;
    const centre = vector(next, dims);
    const rows = Array.from({ length: 4000 }, () => Float32Array.from(centre, (v) => v + 0.002 * next()));
    const m = laidOut(rows, dims);
    const q = Float32Array.from(centre, (v) => v + 0.01 * next());
    expect(scan(m, [q], 100)[0]).toEqual(exactTop(m, q, 100));
    // Equal rows throughout: every score ties, the lowest rows win.
    const same = laidOut(Array.from({ length: 700 }, () => centre), dims);
    expect(Array.from(scan(same, [q], 5)[0]!.rows)).toEqual([0, 1, 2, 3, 4]);
  });

  it('answers each query of a batch what it answers alone, in any row range', () => {
    const next = random(13);
    const rows = Array.from({ length: 1500 }, () => vector(next, 384));
    const m = laidOut(rows, 384);
    const queries = Array.from({ length: 8 }, () => vector(next, 384));
    for (const [start, end] of [[0, 1500], [100, 1101], [1499, 1500]] as const) {
      const together = scan(m, queries, 25, start, end);
      queries.forEach((q, i) => expect(together[i]).toEqual(scan(m, [q], 25, start, end)[0]));
    }
  });
});

describe('the scan threads', () => {
  const idOf = (i: number) => `r${String(i).padStart(5, '0')}`;

  it('batch concurrent queries with the same answers as one scan each', async () => {
    const next = random(17);
    const dims = 384;
    const rows = Array.from({ length: 3000 }, () => vector(next, dims)); // over the threshold for threads
    const pool = new ScanPool(2);
    try {
      const alone = new Matrix(rows.map((_, i) => idOf(i)), dims, (i) => rows[i]!);
      const split = new Matrix(rows.map((_, i) => idOf(i)), dims, (i) => rows[i]!, pool);
      const queries = Array.from({ length: 20 }, () => vector(next, dims)); // more than one batch
      const together = await Promise.all(queries.map((q, i) => topK(split, q, 10 + i)));
      for (const [i, q] of queries.entries()) expect(together[i]).toEqual(await topK(alone, q, 10 + i));
    } finally {
      await pool.close();
    }
  });

  it('reject the callers of a scan that fails or a thread that stops, and scan again afterwards', async () => {
    const next = random(19);
    const dims = 384;
    const rows = Array.from({ length: 3000 }, () => vector(next, dims));
    const pool = new ScanPool(2);
    try {
      // A request past the end of its memory traps in the kernel: the thread answers with the error.
      const memory = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
      const layout: Layout = { rows: 100_000, stride: 32, slots: 1, batch: 1 };
      const query = scanQuery(normalise(vector(next, 32)), 5, layout, 0.01);
      await expect(pool.scan(0, { matrix: -1, memory, layout, queries: [query], start: 0, end: 100_000 })).rejects.toThrow(/vector scan failed/);

      // A thread that stops while a batch of queries is on it fails that batch; the queries after it scan on.
      const alone = new Matrix(rows.map((_, i) => idOf(i)), dims, (i) => rows[i]!);
      const m = new Matrix(rows.map((_, i) => idOf(i)), dims, (i) => rows[i]!, pool);
      await topK(m, rows[0]!, 1); // both threads started
      const threads = pool['threads'];
      const scan = pool.scan.bind(pool);
      let stopped = false;
      pool.scan = (index, req) => {
        // Stopped as the batch is posted to it: asked first, so the batch can never be answered (stopping it after
        // posting raced the thread's answer on a busy machine).
        if (index === 1 && req.queries.length > 1 && !stopped) {
          stopped = true;
          void threads[1]!.terminate();
        }
        return scan(index, req);
      };
      const queries = Array.from({ length: 10 }, () => vector(next, dims));
      // The first scans alone; the next eight wait for it and scan together (MAX_BATCH in vectors.ts); then the last.
      const results = await Promise.allSettled(queries.map((q) => topK(m, q, 5)));
      expect(results.map((r) => r.status)).toEqual(['fulfilled', ...new Array<string>(8).fill('rejected'), 'fulfilled']);
      for (const r of results.slice(1, 9)) expect(((r as PromiseRejectedResult).reason as Error).message).toMatch(/vector scan thread stopped/);
      expect((results[9] as PromiseFulfilledResult<unknown>).value).toEqual(await topK(alone, queries[9]!, 5));
    } finally {
      await pool.close();
    }
  });
});
