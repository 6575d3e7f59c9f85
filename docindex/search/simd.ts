/**
 * The dot-product kernel of semantic search, in WebAssembly SIMD: four float32 lanes at a time, two independent
 * accumulators, about five times JavaScript's best scalar loop (`npm run bench -- context`). The module is tiny, so it
 * is assembled here from its instructions rather than shipped as a binary; its text form:
 *
 *   (func (export "dots") (param $q i32) (param $m i32) (param $rows i32) (param $stride i32) (param $out i32)
 *     ;; for each of $rows rows of $stride bytes from $m: out[r] = sum(row * q), with $stride a multiple of 32
 *     (local $p i32) (local $end i32) (local $qp i32) (local $a0 v128) (local $a1 v128) ...)
 *
 * Every address is a byte offset into the one imported memory, which the caller lays out (see vectors.ts).
 */

/** Rows are padded to a multiple of this many floats, the width of one loop step (two v128 loads). */
export const LANES_PER_STEP = 8;

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
  f32Store: [0x38, 2, 0], // align 2^2, offset 0
  v128Load: (offset: number) => [0xfd, 0x00, 4, ...uleb(offset)], // align 2^4
  v128Zero: [0xfd, 0x0c, ...new Array<number>(16).fill(0)],
  f32x4Add: [0xfd, ...uleb(0xe4)],
  f32x4Mul: [0xfd, ...uleb(0xe6)],
  f32x4Lane: (lane: number) => [0xfd, 0x1f, lane],
};

// Parameters, then locals, by index.
const [q, m, rows, stride, out, p, end, qp, a0, a1] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] as const;

const body = [
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

function assemble(shared: boolean): Uint8Array<ArrayBuffer> {
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), 0]])),
    // env.memory: min 0 pages; a shared memory must also declare a maximum (the whole 4 GiB address space).
    ...section(2, vec([[...bytes('env'), ...bytes('memory'), 0x02, ...(shared ? [0x03, 0, ...uleb(65536)] : [0x00, 0])]])),
    ...section(3, vec([[0]])),
    ...section(7, vec([[...bytes('dots'), 0x00, 0]])),
    ...section(10, vec([[...uleb(body.length), ...body]])),
  ]);
}

export type Dots = (q: number, m: number, rows: number, stride: number, out: number) => void;

const modules = new Map<boolean, WebAssembly.Module>();

/** The kernel bound to `memory` (shared or not: a SharedArrayBuffer-backed memory needs the shared variant). */
export function dotsKernel(memory: WebAssembly.Memory): Dots {
  const shared = (memory.buffer as ArrayBuffer | SharedArrayBuffer) instanceof SharedArrayBuffer;
  let module = modules.get(shared);
  if (!module) {
    module = new WebAssembly.Module(assemble(shared));
    modules.set(shared, module);
  }
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  return instance.exports.dots as Dots;
}
