import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import onnxProto from 'onnx-proto';
import { buildTinyModel, valueInfo } from './tiny-model.js';

const { onnx } = onnxProto;
const { FLOAT, INT64 } = onnx.TensorProto.DataType;

/**
 * Builds a tiny cross-encoder that transformers.js loads as a BertForSequenceClassification: the tiny model's WordPiece
 * tokenizer (fakes/tiny-model.ts) with an ONNX graph that reads a (query, passage) pair and outputs `logits` [batch, 1].
 * The score is the cosine of the query's summed token vectors (token type 0) and the passage's (type 1), times 10:
 * a passage that holds the query's words scores higher. Token vectors come from SHA-256 of the token, so every run
 * builds the same model; special tokens and single letters weigh little. `broken` writes a file that is not ONNX.
 */
export interface TinyCrossEncoderOptions {
  hidden?: number;
  words?: string[];
  broken?: boolean;
}

function tokenVector(token: string, index: number, hidden: number): number[] {
  const out: number[] = [];
  for (let k = 0; out.length < hidden; k++) {
    for (const byte of createHash('sha256').update(`${token}\n${k}`).digest()) out.push(byte / 255 - 0.5);
  }
  const weight = index < 5 || token.length === 1 || token.startsWith('##') ? 0.05 : 1;
  return out.slice(0, hidden).map((v) => v * weight);
}

const node = (opType: string, input: string[], output: string, attribute: Record<string, number> = {}) =>
  onnx.NodeProto.create({
    opType,
    input,
    output: [output],
    name: output,
    attribute: Object.entries(attribute).map(([name, i]) => onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.INT, i })),
  });

function graph(vocab: string[], hidden: number): Uint8Array {
  const matrix = new Float32Array(vocab.flatMap((t, i) => tokenVector(t, i, hidden)));
  const sumOver = (input: string, axis: string, output: string, keepdims: number) => node('ReduceSum', [input, axis], output, { keepdims });
  const g = onnx.GraphProto.create({
    name: 'tiny-cross-encoder',
    node: [
      node('Gather', ['embeddings', 'input_ids'], 'tokens'),
      node('Cast', ['attention_mask'], 'mask', { to: FLOAT }),
      node('Cast', ['token_type_ids'], 'types', { to: FLOAT }),
      // Passage tokens: in the mask and of type 1; query tokens: in the mask and not.
      node('Mul', ['mask', 'types'], 'passage_w'),
      node('Sub', ['mask', 'passage_w'], 'query_w'),
      node('Unsqueeze', ['passage_w', 'axis2'], 'passage_w3'),
      node('Unsqueeze', ['query_w', 'axis2'], 'query_w3'),
      node('Mul', ['tokens', 'passage_w3'], 'passage_tokens'),
      node('Mul', ['tokens', 'query_w3'], 'query_tokens'),
      sumOver('passage_tokens', 'axis1', 'passage_sum', 0),
      sumOver('query_tokens', 'axis1', 'query_sum', 0),
      node('LpNormalization', ['passage_sum'], 'passage_unit', { axis: -1, p: 2 }),
      node('LpNormalization', ['query_sum'], 'query_unit', { axis: -1, p: 2 }),
      node('Mul', ['query_unit', 'passage_unit'], 'products'),
      sumOver('products', 'axis1', 'cosine', 1),
      node('Mul', ['cosine', 'scale'], 'logits'),
    ],
    initializer: [
      onnx.TensorProto.create({ name: 'embeddings', dims: [vocab.length, hidden], dataType: FLOAT, rawData: new Uint8Array(matrix.buffer) }),
      onnx.TensorProto.create({ name: 'axis1', dims: [1], dataType: INT64, int64Data: [1] }),
      onnx.TensorProto.create({ name: 'axis2', dims: [1], dataType: INT64, int64Data: [2] }),
      onnx.TensorProto.create({ name: 'scale', dims: [], dataType: FLOAT, floatData: [10] }),
    ],
    input: ['input_ids', 'attention_mask', 'token_type_ids'].map((name) => valueInfo(name, INT64, ['batch', 'sequence'])),
    output: [valueInfo('logits', FLOAT, ['batch', 1])],
  });
  const model = onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 13 }], producerName: 'gristmill-tests', graph: g });
  return onnx.ModelProto.encode(model).finish();
}

/** The model folder `<dir>/tiny-cross-encoder`, which a `local-transformers` rerank profile's `modelPath` takes. */
export async function buildTinyCrossEncoder(dir: string, opts: TinyCrossEncoderOptions = {}): Promise<{ path: string; vocab: string[] }> {
  const hidden = opts.hidden ?? 64;
  // The tokenizer files are the tiny embedding model's; its graph and config are replaced.
  const staging = path.join(dir, 'tiny-cross-encoder.staging');
  const tiny = await buildTinyModel(staging, { ...(opts.words && { words: opts.words }) });
  const modelDir = path.join(dir, 'tiny-cross-encoder');
  await fs.rm(modelDir, { recursive: true, force: true });
  await fs.rename(tiny.path, modelDir);
  await fs.rm(staging, { recursive: true, force: true });
  await fs.writeFile(path.join(modelDir, 'onnx', 'model.onnx'), opts.broken ? 'not an ONNX graph' : graph(tiny.vocab, hidden));
  await fs.writeFile(
    path.join(modelDir, 'config.json'),
    JSON.stringify({
      model_type: 'bert',
      architectures: ['BertForSequenceClassification'],
      hidden_size: hidden,
      vocab_size: tiny.vocab.length,
      num_labels: 1,
      id2label: { 0: 'LABEL_0' },
      label2id: { LABEL_0: 0 },
    }),
  );
  return { path: modelDir, vocab: tiny.vocab };
}
