/**
 * A scan thread: scores a range of a matrix's rows in the matrix's shared WebAssembly memory and answers the best
 * few. Several threads split one query's rows, so a scan uses every core and never holds the API's event loop.
 */
import { parentPort } from 'node:worker_threads';
import { scanRange } from './scan.js';
import type { ScanReply, ScanRequest } from './scan-pool.js';
import { dotsKernel, type Dots } from './simd.js';

/**
 * One kernel instance per matrix this thread has seen, dropped when the main thread evicts the matrix; at most a
 * few are kept in any case, so a matrix used once and never cached (larger than the cache) cannot pile up here.
 */
const kernels = new Map<number, Dots>();
const MAX_KERNELS = 16;

parentPort!.on('message', (msg: ScanRequest | { forget: number }) => {
  if ('forget' in msg) {
    kernels.delete(msg.forget);
    return;
  }
  let reply: ScanReply;
  try {
    let dots = kernels.get(msg.matrix);
    if (!dots) {
      kernels.set(msg.matrix, (dots = dotsKernel(msg.memory)));
      if (kernels.size > MAX_KERNELS) kernels.delete(kernels.keys().next().value!);
    }
    reply = { id: msg.id, ...scanRange(msg.memory, dots, msg.layout, msg.slot, msg.query, msg.start, msg.end, msg.limit) };
  } catch (err) {
    reply = { id: msg.id, error: (err as Error).message };
  }
  parentPort!.postMessage(reply, 'rows' in reply ? [reply.rows.buffer, reply.scores.buffer] : []);
});
