/**
 * A scan thread: scores a range of a matrix's rows in the matrix's shared WebAssembly memory for a batch of queries
 * and answers each one's best few. Several threads split a batch's rows, so a scan uses every core and never holds
 * the API's event loop.
 */
import { parentPort } from 'node:worker_threads';
import { scanRange } from './scan.js';
import type { ScanReply, ScanRequest } from './scan-pool.js';
import { bindKernels, type Kernels } from './simd.js';

/**
 * The kernels bound to each matrix this thread has seen, dropped when the main thread evicts the matrix; at most a
 * few are kept in any case, so a matrix used once and never cached (larger than the cache) cannot pile up here.
 */
const kernels = new Map<number, Kernels>();
const MAX_KERNELS = 16;

parentPort!.on('message', (msg: ScanRequest | { forget: number }) => {
  if ('forget' in msg) {
    kernels.delete(msg.forget);
    return;
  }
  let reply: ScanReply;
  try {
    let k = kernels.get(msg.matrix);
    if (!k) {
      kernels.set(msg.matrix, (k = bindKernels(msg.memory)));
      if (kernels.size > MAX_KERNELS) kernels.delete(kernels.keys().next().value!);
    }
    reply = { id: msg.id, tops: scanRange(msg.memory, k, msg.layout, msg.slot, msg.queries, msg.start, msg.end) };
  } catch (err) {
    reply = { id: msg.id, error: (err as Error).message };
  }
  parentPort!.postMessage(reply, 'tops' in reply ? reply.tops.flatMap((t) => [t.rows.buffer, t.scores.buffer]) : []);
});
