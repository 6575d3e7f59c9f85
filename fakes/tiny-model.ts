import fs from 'node:fs/promises';
import path from 'node:path';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

/**
 * Builds a tiny BERT-style feature-extraction model that transformers.js loads like any other: a WordPiece
 * tokenizer and an ONNX graph whose output is each token's embedding (masked). Mean pooling and normalisation then
 * give real unit vectors in milliseconds. Words in one `synonyms` group share most of their vector, so "setup" is
 * near "install": enough meaning for semantic-search tests.
 */
export interface TinyModelOptions {
  hidden?: number;
  words?: string[];
  synonyms?: string[][];
}

const DEFAULT_WORDS = (
  'the a an to of and or in on for with how do i is are what when why use using install installation setup configure ' +
  'configuration config router route routes routing render rendering component components hook hooks state effect ' +
  'server client request response fetch data cache caching database query queries error errors handle handling ' +
  'test testing tests build deploy deployment auth authentication login token tokens widget widgets page pages ' +
  'start stop run running create delete update read write file files folder path api function class method example'
).split(' ');
const DEFAULT_SYNONYMS = [
  ['install', 'installation', 'setup', 'configure', 'configuration', 'config'],
  ['router', 'route', 'routes', 'routing'],
  ['render', 'rendering', 'component', 'components'],
  ['auth', 'authentication', 'login', 'token', 'tokens'],
  ['cache', 'caching'],
  ['error', 'errors', 'handle', 'handling'],
  ['test', 'testing', 'tests'],
  ['deploy', 'deployment', 'build'],
];

/** A small deterministic PRNG, so every run builds the same model. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

export async function buildTinyModel(dir: string, opts: TinyModelOptions = {}): Promise<{ path: string; dimensions: number; vocab: string[] }> {
  const hidden = opts.hidden ?? 32;
  const words = opts.words ?? DEFAULT_WORDS;
  const letters = 'abcdefghijklmnopqrstuvwxyz0123456789'.split('');
  const vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...new Set([...words, ...letters, ...letters.map((l) => `##${l}`), '.', ',', '?', '!', '-', '_', '/', ':', '(', ')'])];
  const next = rng(42);
  const base = new Map<string, number[]>();
  for (const group of opts.synonyms ?? DEFAULT_SYNONYMS) {
    const v = Array.from({ length: hidden }, next);
    for (const w of group) base.set(w, v);
  }
  const matrix = new Float32Array(vocab.length * hidden);
  vocab.forEach((token, i) => {
    const shared = base.get(token);
    for (let j = 0; j < hidden; j++) {
      // Specials and punctuation weigh little; synonyms share 80% of their vector.
      const own = next();
      const value = shared ? 0.8 * shared[j]! + 0.2 * own : own;
      matrix[i * hidden + j] = i < 5 || token.length === 1 || token.startsWith('##') ? value * 0.05 : value;
    }
  });

  const graph = onnx.GraphProto.create({
    name: 'tiny-bert',
    node: [
      onnx.NodeProto.create({ opType: 'Gather', input: ['embeddings', 'input_ids'], output: ['gathered'], name: 'gather' }),
      onnx.NodeProto.create({ opType: 'Cast', input: ['attention_mask'], output: ['mask_f'], name: 'cast', attribute: [onnx.AttributeProto.create({ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: onnx.TensorProto.DataType.FLOAT })] }),
      onnx.NodeProto.create({ opType: 'Unsqueeze', input: ['mask_f', 'axes'], output: ['mask_3d'], name: 'unsqueeze' }),
      onnx.NodeProto.create({ opType: 'Mul', input: ['gathered', 'mask_3d'], output: ['last_hidden_state'], name: 'mul' }),
    ],
    initializer: [
      onnx.TensorProto.create({ name: 'embeddings', dims: [vocab.length, hidden], dataType: onnx.TensorProto.DataType.FLOAT, rawData: new Uint8Array(matrix.buffer) }),
      onnx.TensorProto.create({ name: 'axes', dims: [1], dataType: onnx.TensorProto.DataType.INT64, int64Data: [2] }),
    ],
    input: [
      valueInfo('input_ids', onnx.TensorProto.DataType.INT64, ['batch', 'sequence']),
      valueInfo('attention_mask', onnx.TensorProto.DataType.INT64, ['batch', 'sequence']),
    ],
    output: [valueInfo('last_hidden_state', onnx.TensorProto.DataType.FLOAT, ['batch', 'sequence', hidden])],
  });
  const model = onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 13 }], producerName: 'gristmill-tests', graph });
  const bytes = onnx.ModelProto.encode(model).finish();

  const modelDir = path.join(dir, 'tiny-bert');
  await fs.mkdir(path.join(modelDir, 'onnx'), { recursive: true });
  await fs.writeFile(path.join(modelDir, 'onnx', 'model.onnx'), bytes);
  await fs.writeFile(path.join(modelDir, 'config.json'), JSON.stringify({ model_type: 'bert', hidden_size: hidden, architectures: ['BertModel'], vocab_size: vocab.length }));
  await fs.writeFile(
    path.join(modelDir, 'tokenizer_config.json'),
    JSON.stringify({ tokenizer_class: 'BertTokenizer', do_lower_case: true, model_max_length: 512, cls_token: '[CLS]', sep_token: '[SEP]', pad_token: '[PAD]', unk_token: '[UNK]', mask_token: '[MASK]' }),
  );
  const special = (id: number, content: string) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  await fs.writeFile(
    path.join(modelDir, 'tokenizer.json'),
    JSON.stringify({
      version: '1.0',
      truncation: { direction: 'Right', max_length: 512, strategy: 'LongestFirst', stride: 0 },
      padding: null,
      added_tokens: [special(0, '[PAD]'), special(1, '[UNK]'), special(2, '[CLS]'), special(3, '[SEP]'), special(4, '[MASK]')],
      normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
      pre_tokenizer: { type: 'BertPreTokenizer' },
      post_processor: {
        type: 'TemplateProcessing',
        single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
        pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
        special_tokens: { '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] } },
      },
      decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
      model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: Object.fromEntries(vocab.map((t, i) => [t, i])) },
    }),
  );
  return { path: modelDir, dimensions: hidden, vocab };
}

export function valueInfo(name: string, elemType: number, dims: (string | number)[]) {
  return onnx.ValueInfoProto.create({
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } },
  });
}
