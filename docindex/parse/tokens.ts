import { countTokens as bpeCount } from 'gpt-tokenizer/encoding/o200k_base';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';

/**
 * Token counting for snippets: the o200k_base encoding (GPT-4o and later) from gpt-tokenizer, whose ranks ship
 * inside the package, so counting works offline. Text that happens to contain special-token markup such as
 * `<|endoftext|>` is counted as ordinary text instead of throwing.
 *
 * One guard: BPE merging is quadratic in the length of a pre-token, and a run of one character class without a
 * break (50 000 `{`, a long line of `=`, thousands of spaces, a DNA sequence) is a single pre-token: 50 000 `{`
 * took 1.4 s. Runs longer than LONG_RUN characters are therefore counted in CHUNK-character pieces, which makes the
 * count of such (pathological) text approximate by at most a token per piece; all other text is counted exactly.
 *
 * The encoding merges bytes within a pre-token only, so a text's count is the sum of its pre-tokens' (the encoding's
 * own split, O200K_TOKEN_SPLIT_REGEX), and each pre-token's count is kept (`pieceCount`): a corpus repeats its words
 * and indentation, and the library's own cache of merges costs more per hit than a lookup here (issue 24: parsing
 * the index benchmark's corpus takes 13% less CPU, bench/README.md "Index").
 */
export const TOKENIZER_ENCODING = 'o200k_base';

const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
const LONG_RUN = 1000;
const CHUNK = 256;

/** Character classes of the encoding's pre-tokenizer, coarsely: 1 letter, 2 digit, 3 space, 4 punctuation. */
const ASCII_CLASS = new Uint8Array(128).map((_, c) =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) ? 1 : c >= 48 && c <= 57 ? 2 : c === 32 || (c >= 9 && c <= 13) ? 3 : 4,
);

/** [start, end) of every run of one class (digits aside) longer than LONG_RUN characters, or null (the common case). */
function longRuns(text: string): [number, number][] | null {
  if (text.length <= LONG_RUN) return null;
  let runs: [number, number][] | null = null;
  let cls = 0;
  let start = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    const k = c < 128 ? ASCII_CLASS[c]! : c === 0x3000 || c === 0xa0 ? 3 : 1;
    if (k === cls) continue;
    if (cls !== 2 && i - start > LONG_RUN) (runs ??= []).push([start, i]);
    cls = k;
    start = i;
  }
  if (cls !== 2 && n - start > LONG_RUN) (runs ??= []).push([start, n]);
  return runs;
}

/** Pre-tokens whose counts are kept, per thread; the map starts again when full. Longer ones are counted each time. */
const PIECES_KEPT = 50_000;
const PIECE_KEPT_CHARS = 64;
const pieceCounts = new Map<string, number>();
/** The encoding's split, a copy of its own: global, so `exec` walks a text; `exact` starts it from 0 and nothing re-enters it. */
const SPLIT = new RegExp(O200K_TOKEN_SPLIT_REGEX);

function pieceCount(piece: string): number {
  let n = pieceCounts.get(piece);
  if (n === undefined) {
    n = bpeCount(piece, PLAIN_TEXT);
    if (piece.length <= PIECE_KEPT_CHARS) {
      if (pieceCounts.size >= PIECES_KEPT) pieceCounts.clear();
      pieceCounts.set(piece, n);
    }
  }
  return n;
}

/** The sum of the pre-tokens' counts; once it passes `limit` it stops there, with a count over the limit. */
function exact(text: string, limit = Infinity): number {
  SPLIT.lastIndex = 0;
  let n = 0;
  for (let m = SPLIT.exec(text); m; m = SPLIT.exec(text)) {
    n += pieceCount(m[0]);
    if (n > limit) break;
  }
  return n;
}

/** Number of tokens of `text` (exact, but for the long runs described above). */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  const runs = longRuns(text);
  if (!runs) return exact(text);
  let total = 0;
  let pos = 0;
  for (const [s, e] of runs) {
    total += exact(text.slice(pos, s));
    for (let k = s; k < e; ) {
      let end = Math.min(e, k + CHUNK);
      const c = text.charCodeAt(end - 1);
      if (end < e && c >= 0xd800 && c <= 0xdbff) end++; // keep surrogate pairs together
      total += exact(text.slice(k, end));
      k = end;
    }
    pos = e;
  }
  return total + exact(text.slice(pos));
}

/**
 * The token count of `text` when it is at most `limit`, else `false`. Exact; a text much longer than the limit stops
 * being counted as soon as the limit is passed, so detecting one costs about `limit` tokens of work.
 */
export function countTokensWithin(text: string, limit: number): number | false {
  const n = longRuns(text) ? countTokens(text) : exact(text, limit);
  return n <= limit ? n : false;
}
