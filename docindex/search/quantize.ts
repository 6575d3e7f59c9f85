/**
 * 8-bit vectors for the first pass of the scan (scan.ts): each row is scaled so its largest value is ±127 and
 * rounded, a quarter of float32's bytes to stream per query; the query is scaled to int16, as far as its dot products
 * with int8 rows cannot overflow 32 bits. The first pass ranks rows by these approximate similarities; its best are
 * scored again with the float32 rows, and `errorBound` says how far an approximate similarity can be from the exact
 * one, so the scan can tell when its candidates surely hold the exact best (scan.ts `rescored`).
 */

export const ROW_MAX = 127;

/** Row `v` (unit length) as int8 values into `out`; returns the scale, v[i] ≈ scale * out[i]. */
export function quantizeRow(v: Float32Array, out: Int8Array): number {
  let max = 0;
  for (let i = 0; i < v.length; i++) {
    const a = v[i]! < 0 ? -v[i]! : v[i]!;
    if (a > max) max = a;
  }
  if (max === 0) return 0;
  const scale = Math.fround(max / ROW_MAX); // as the kernel reads it back
  // |v[i]| <= max, so |v[i] * inverse| <= 127 plus float32's rounding of the scale, far below 127.5: no clamp needed.
  const inverse = 1 / scale;
  // Rounded to nearest by truncating a positive number: a third faster than Math.round for a 100k-row matrix.
  for (let i = 0; i < v.length; i++) out[i] = ((v[i]! * inverse + 128.5) | 0) - 128;
  return scale;
}

/** A query for the 8-bit pass: int16 values padded to the row stride, q[i] ≈ scale * values[i]. */
export interface QuantizedQuery {
  values: Int16Array;
  scale: number;
  /** The sum of |values|, for the error bound. */
  l1: number;
}

/**
 * The largest int16 value a query may take so that its dot product with any int8 row of `stride` values stays
 * within int32: stride * 127 * max < 2^31.
 */
export const queryMax = (stride: number) => Math.min(32767, Math.floor((2 ** 31 - 1) / (ROW_MAX * stride)));

export function quantizeQuery(q: Float32Array, stride: number): QuantizedQuery {
  const values = new Int16Array(stride);
  let max = 0;
  for (let i = 0; i < q.length; i++) max = Math.max(max, Math.abs(q[i]!));
  if (max === 0) return { values, scale: 0, l1: 0 };
  const scale = max / queryMax(stride);
  let l1 = 0;
  for (let i = 0; i < q.length; i++) l1 += Math.abs((values[i] = Math.round(q[i]! / scale)));
  return { values, scale, l1 };
}

/**
 * How far `scale * (kernel's approximate score)` can be from the float32 kernel's score for any row, for a unit query
 * of `dims` values against unit rows whose scales are at most `rowScale`. With x = s X + e and q = t Q + f (|e| <= s/2,
 * |f| <= t/2 per value): x.q - st X.Q = sX.f + e.tQ + e.f, bounded by t/2 |sX|_1 + s/2 |tQ|_1 + dims s t / 4, where
 * |sX|_1 <= |x|_1 + dims s/2 <= sqrt(dims) + dims s/2. Float32 rounding (of the exact sum, and of the approximate
 * score's conversion and scaling) adds a few units in the last place of numbers at most 1 in size per value summed.
 */
export function errorBound(q: QuantizedQuery, dims: number, rowScale: number): number {
  const s = rowScale;
  const t = q.scale;
  const rounding = (dims + 8) * 2 ** -22;
  return (t / 2) * (Math.sqrt(dims) * 1.0001 + (dims * s) / 2) + (s / 2) * t * q.l1 + (dims * s * t) / 4 + rounding;
}
