import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Busboy } from '@fastify/busboy';
import type { Context } from 'koa';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../core/errors.js';
import { storedUploadName } from './paths.js';

export interface ReceivedUpload {
  fields: Record<string, string>;
  file: { clientName: string; storedName: string; mimeType: string; bytes: number };
}

/** Room for the multipart framing and the text fields around the file. */
const FRAMING_BYTES = 1024 * 1024;
/** After a refusal the rest of the body is read and dropped (so the client sees the answer), up to this much. */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Streams a multipart upload (one file part, a few text fields) into `dir`, enforcing `maxBytes` while it streams:
 * a file over the limit is cut off, its partial copy deleted, and the request answered 413. A body declared far
 * larger than the limit is refused before any of it is read. Only one file is taken; the stored name is
 * `source.<ext>` (see paths.ts), never the client's name.
 */
export async function receiveUpload(ctx: Context, dir: string, maxBytes: number): Promise<ReceivedUpload> {
  const declared = Number(ctx.get('content-length') || NaN);
  if (Number.isFinite(declared) && declared > maxBytes + FRAMING_BYTES) {
    ctx.set('Connection', 'close');
    throw new PayloadTooLargeError(`The upload is larger than the limit of ${maxBytes} bytes (UPLOAD_MAX_BYTES)`, 'UPLOAD_TOO_LARGE');
  }
  let busboy: ReturnType<typeof Busboy>;
  try {
    busboy = Busboy({
      headers: ctx.req.headers as { 'content-type': string },
      limits: { fileSize: maxBytes, files: 1, fields: 20, fieldSize: 64 * 1024, parts: 30 },
    });
  } catch (err) {
    // No boundary, or not a type busboy reads: the client's mistake.
    throw new ValidationError(`The multipart body is malformed: ${(err as Error).message}`, 'INVALID_MULTIPART');
  }
  await fs.mkdir(dir, { recursive: true });
  const fields: Record<string, string> = {};
  let file: ReceivedUpload['file'] | undefined;
  let failure: Error | undefined;
  let partial: string | undefined;
  const writes: Promise<void>[] = [];
  /** The files being written: one destroyed before its open finished still creates its file, then closes it. */
  const sinks: WriteStream[] = [];
  /** The file part being written, stopped should the body never finish (aborted, malformed, drained). */
  let active: Readable | undefined;

  // A body that ends inside a part fails that part's stream too: every part stream has an error listener, or the
  // 'error' would end the process. The same error reaches busboy's own 'error', which decides the answer.
  const discard = (stream: Readable) => {
    stream.on('error', () => undefined);
    stream.resume();
  };
  busboy.on('field', (name: string, value: string) => {
    fields[name] = value;
  });
  busboy.on('file', (field: string, stream: Readable & { truncated?: boolean }, filename: string, _enc: string, mimeType: string) => {
    if (field !== 'file' || file || failure) {
      discard(stream);
      return;
    }
    const storedName = storedUploadName(filename ?? '', mimeType ?? '');
    if (!storedName) {
      failure = new UnsupportedMediaTypeError(
        `"${filename}" is not an audio or video file this service reads (by its extension or type ${mimeType})`,
        'UNSUPPORTED_MEDIA_TYPE',
      );
      discard(stream);
      return;
    }
    const target = path.join(dir, storedName);
    partial = `${target}.part`;
    stream.on('limit', () => {
      failure ??= new PayloadTooLargeError(`The upload is larger than the limit of ${maxBytes} bytes (UPLOAD_MAX_BYTES)`, 'UPLOAD_TOO_LARGE');
    });
    const p = partial;
    active = stream;
    // Piped at once (the directory exists already): no chunk can flow past before the file is there.
    const sink = createWriteStream(p, { flags: 'wx' });
    sinks.push(sink);
    const written = pipeline(stream, sink);
    writes.push(
      (async () => {
        await written;
        if (failure || stream.truncated) return;
        await fs.rename(p, target);
        const { size } = await fs.stat(target);
        file = { clientName: path.basename(filename || storedName).slice(0, 255), storedName, mimeType: mimeType ?? '', bytes: size };
      })().catch((err: Error) => {
        failure ??= err;
        discard(stream);
      }),
    );
  });

  let drained = 0;
  let finished = false;
  try {
    await new Promise<void>((resolve, reject) => {
      busboy.on('finish', () => {
        finished = true;
        resolve();
      });
      busboy.on('error', reject);
      ctx.req.on('error', reject);
      ctx.req.on('aborted', () => reject(new ValidationError('The upload was aborted', 'REQUEST_ABORTED')));
      ctx.req.on('data', (chunk: Buffer) => {
        drained += chunk.length;
        if (failure && drained > maxBytes + DRAIN_MAX_BYTES) {
          ctx.set('Connection', 'close');
          resolve();
        }
      });
      ctx.req.pipe(busboy);
    });
  } catch (err) {
    failure ??= err instanceof Error && !(err instanceof ValidationError) ? new ValidationError(`The multipart body is malformed: ${err.message}`, 'INVALID_MULTIPART') : (err as Error);
  } finally {
    // Unfinished: the file part will never end by itself, so its write is stopped (and then deleted below).
    if (!finished) {
      ctx.req.unpipe(busboy);
      active?.destroy();
    }
  }
  await Promise.all(writes);
  // A write stopped early may still be opening its file: it must be closed before the file can be deleted.
  await Promise.all(sinks.map((sink) => (sink.closed ? undefined : once(sink, 'close').catch(() => undefined))));
  if (failure || !file) {
    if (partial) await fs.rm(partial, { force: true });
    if (file) await fs.rm(path.join(dir, file.storedName), { force: true });
    await fs.rmdir(dir).catch(() => undefined);
    if (failure) throw failure;
    throw new ValidationError('The upload has no file: send the media in a form field named "file"', 'VALIDATION_ERROR', [
      { pointer: '/body/file', message: 'is required' },
    ]);
  }
  if (file.bytes === 0) {
    await fs.rm(dir, { recursive: true, force: true });
    throw new ValidationError('The uploaded file is empty', 'VALIDATION_ERROR', [{ pointer: '/body/file', message: 'is empty' }]);
  }
  return { fields, file };
}
