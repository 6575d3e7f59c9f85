/**
 * The dot-product kernels of semantic search, in WebAssembly SIMD. The module is tiny, so it is assembled here from
 * its instructions rather than shipped as a binary. Every address is a byte offset into the one imported memory,
 * which the caller lays out (scan.ts). Its text form:
 *
 *   (func (export "dots") (param $q i32) (param $m i32) (param $rows i32) (param $stride i32) (param $out i32)
 *     ;; float32: for each of $rows rows of $stride bytes from $m: out[r] = sum(row * q), with $stride a multiple
 *     ;; of 32; four lanes at a time, two independent accumulators, about five times JavaScript's best scalar loop
 *     (local $p i32) (local $end i32) (local $qp i32) (local $a0 v128) (local $a1 v128) ...)
 *
 *   (func (export "dots8") (param $qs i32) (param $nq i32) (param $m i32) (param $rows i32) (param $stride i32)
 *                          (param $scales i32) (param $out i32) (param $outStride i32)
 *     ;; int8 rows of $stride bytes from $m (a multiple of 16) against $nq >= 1 int16 queries of $stride values each
 *     ;; from $qs: out[b * outStride + 4r] = f32(sum(row * query b)) * scales[r]. Per step, eight values at a time
 *     ;; are loaded sign-extended (i16x8.load8x8_s) and multiplied and added in pairs (i32x4.dot_i16x8_s). The
 *     ;; queries loop inside the row loop, so a row is read from memory once for the whole batch (then from cache).
 *     (local $p i32) (local $end i32) (local $qp i32) (local $b i32) (local $o i32) (local $a0 v128) (local $a1 v128) ...)
 */

/** Rows are padded to a multiple of this many values, the width of one loop step of either kernel. */
export const LANES_PER_STEP = 16;

const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
};
const bytes = (s: string) => [...uleb(s.length), ...Buffer.from(s, 'utf8')];
const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];

// Opcodes (WebAssembly core and SIMD proposals).
const I32 = 0x7f;
const V128 = 0x7b;
const op = {
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  end: [0x0b],
  brIf: (depth: number) => [0x0d, depth],
  get: (i: number) => [0x20, i],
  set: (i: number) => [0x21, i],
  tee: (i: number) => [0x22, i],
  i32: (n: number) => [0x41, ...uleb(n)], // only small non-negative constants here, where signed = unsigned LEB
  i32Add: [0x6a],
  i32Sub: [0x6b],
  i32Eqz: [0x45],
  i32LtU: [0x49],
  f32Add: [0x92],
  f32Mul: [0x94],
  f32FromI32: [0xb2], // f32.convert_i32_s
  f32Load: [0x2a, 2, 0], // align 2^2, offset 0
  f32Store: [0x38, 2, 0],
  v128Load: (offset: number) => [0xfd, 0x00, 4, ...uleb(offset)], // align 2^4
  i16x8Load8x8: (offset: number) => [0xfd, 0x01, 3, ...uleb(offset)], // i16x8.load8x8_s, align 2^3
  v128Zero: [0xfd, 0x0c, ...new Array<number>(16).fill(0)],
  i32x4Lane: (lane: number) => [0xfd, 0x1b, lane],
  i32x4Add: [0xfd, ...uleb(0xae)],
  i32x4DotI16x8: [0xfd, ...uleb(0xba)],
  f32x4Add: [0xfd, ...uleb(0xe4)],
  f32x4Mul: [0xfd, ...uleb(0xe6)],
  f32x4Lane: (lane: number) => [0xfd, 0x1f, lane],
};

// dots: parameters, then locals, by index.
const [q, m, rows, stride, out, p, end, qp, a0, a1] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] as const;

const dotsBody = [
  ...vec([
    [3, I32],
    [2, V128],
  ]),
  ...op.block,
  ...op.get(rows), ...op.i32Eqz, ...op.brIf(0),
  ...op.loop, // each row
  ...op.v128Zero, ...op.set(a0),
  ...op.v128Zero, ...op.set(a1),
  ...op.get(m), ...op.set(p),
  ...op.get(m), ...op.get(stride), ...op.i32Add, ...op.set(end),
  ...op.get(q), ...op.set(qp),
  ...op.loop, // each step of 8 floats
  ...op.get(a0), ...op.get(p), ...op.v128Load(0), ...op.get(qp), ...op.v128Load(0), ...op.f32x4Mul, ...op.f32x4Add, ...op.set(a0),
  ...op.get(a1), ...op.get(p), ...op.v128Load(16), ...op.get(qp), ...op.v128Load(16), ...op.f32x4Mul, ...op.f32x4Add, ...op.set(a1),
  ...op.get(qp), ...op.i32(32), ...op.i32Add, ...op.set(qp),
  ...op.get(p), ...op.i32(32), ...op.i32Add, ...op.tee(p),
  ...op.get(end), ...op.i32LtU, ...op.brIf(0),
  ...op.end,
  ...op.get(out),
  ...op.get(a0), ...op.get(a1), ...op.f32x4Add, ...op.tee(a0), ...op.f32x4Lane(0),
  ...op.get(a0), ...op.f32x4Lane(1), ...op.f32Add,
  ...op.get(a0), ...op.f32x4Lane(2), ...op.f32Add,
  ...op.get(a0), ...op.f32x4Lane(3), ...op.f32Add,
  ...op.f32Store,
  ...op.get(out), ...op.i32(4), ...op.i32Add, ...op.set(out),
  ...op.get(end), ...op.set(m),
  ...op.get(rows), ...op.i32(1), ...op.i32Sub, ...op.tee(rows), ...op.brIf(0),
  ...op.end,
  ...op.end,
  ...op.end, // function
];

// dots8: parameters, then locals, by index.
const d8 = { qs: 0, nq: 1, m: 2, rows: 3, stride: 4, scales: 5, out: 6, outStride: 7, p: 8, end: 9, qp: 10, b: 11, o: 12, a0: 13, a1: 14 } as const;

const dots8Body = [
  ...vec([
    [5, I32],
    [2, V128],
  ]),
  ...op.block,
  ...op.get(d8.rows), ...op.i32Eqz, ...op.brIf(0),
  ...op.loop, // each row
  ...op.get(d8.m), ...op.get(d8.stride), ...op.i32Add, ...op.set(d8.end),
  ...op.get(d8.qs), ...op.set(d8.qp),
  ...op.get(d8.out), ...op.set(d8.o),
  ...op.get(d8.nq), ...op.set(d8.b),
  ...op.loop, // each query
  ...op.v128Zero, ...op.set(d8.a0),
  ...op.v128Zero, ...op.set(d8.a1),
  ...op.get(d8.m), ...op.set(d8.p),
  ...op.loop, // each step of 16 values
  ...op.get(d8.a0), ...op.get(d8.p), ...op.i16x8Load8x8(0), ...op.get(d8.qp), ...op.v128Load(0), ...op.i32x4DotI16x8, ...op.i32x4Add, ...op.set(d8.a0),
  ...op.get(d8.a1), ...op.get(d8.p), ...op.i16x8Load8x8(8), ...op.get(d8.qp), ...op.v128Load(16), ...op.i32x4DotI16x8, ...op.i32x4Add, ...op.set(d8.a1),
  ...op.get(d8.qp), ...op.i32(32), ...op.i32Add, ...op.set(d8.qp),
  ...op.get(d8.p), ...op.i32(16), ...op.i32Add, ...op.tee(d8.p),
  ...op.get(d8.end), ...op.i32LtU, ...op.brIf(0),
  ...op.end,
  ...op.get(d8.o),
  ...op.get(d8.a0), ...op.get(d8.a1), ...op.i32x4Add, ...op.tee(d8.a0), ...op.i32x4Lane(0),
  ...op.get(d8.a0), ...op.i32x4Lane(1), ...op.i32Add,
  ...op.get(d8.a0), ...op.i32x4Lane(2), ...op.i32Add,
  ...op.get(d8.a0), ...op.i32x4Lane(3), ...op.i32Add,
  ...op.f32FromI32,
  ...op.get(d8.scales), ...op.f32Load,
  ...op.f32Mul,
  ...op.f32Store,
  ...op.get(d8.o), ...op.get(d8.outStride), ...op.i32Add, ...op.set(d8.o),
  ...op.get(d8.b), ...op.i32(1), ...op.i32Sub, ...op.tee(d8.b), ...op.brIf(0),
  ...op.end,
  ...op.get(d8.end), ...op.set(d8.m),
  ...op.get(d8.scales), ...op.i32(4), ...op.i32Add, ...op.set(d8.scales),
  ...op.get(d8.out), ...op.i32(4), ...op.i32Add, ...op.set(d8.out),
  ...op.get(d8.rows), ...op.i32(1), ...op.i32Sub, ...op.tee(d8.rows), ...op.brIf(0),
  ...op.end,
  ...op.end,
  ...op.end, // function
];

function assemble(shared: boolean): Uint8Array<ArrayBuffer> {
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    // Types: dots' five i32 parameters, dots8's eight; neither returns anything.
    ...section(1, vec([[0x60, ...vec(new Array<number[]>(5).fill([I32])), 0], [0x60, ...vec(new Array<number[]>(8).fill([I32])), 0]])),
    // env.memory: min 0 pages; a shared memory must also declare a maximum (the whole 4 GiB address space).
    ...section(2, vec([[...bytes('env'), ...bytes('memory'), 0x02, ...(shared ? [0x03, 0, ...uleb(65536)] : [0x00, 0])]])),
    ...section(3, vec([[0], [1]])),
    ...section(7, vec([[...bytes('dots'), 0x00, 0], [...bytes('dots8'), 0x00, 1]])),
    ...section(10, vec([[...uleb(dotsBody.length), ...dotsBody], [...uleb(dots8Body.length), ...dots8Body]])),
  ]);
}

export type Dots = (q: number, m: number, rows: number, stride: number, out: number) => void;
export type Dots8 = (qs: number, nq: number, m: number, rows: number, stride: number, scales: number, out: number, outStride: number) => void;

/** Both kernels bound to one memory. */
export interface Kernels {
  dots: Dots;
  dots8: Dots8;
}

const modules = new Map<boolean, WebAssembly.Module>();

/** The kernels bound to `memory` (shared or not: a SharedArrayBuffer-backed memory needs the shared variant). */
export function bindKernels(memory: WebAssembly.Memory): Kernels {
  const shared = (memory.buffer as ArrayBuffer | SharedArrayBuffer) instanceof SharedArrayBuffer;
  let module = modules.get(shared);
  if (!module) {
    module = new WebAssembly.Module(assemble(shared));
    modules.set(shared, module);
  }
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  return { dots: instance.exports.dots as Dots, dots8: instance.exports.dots8 as Dots8 };
}
