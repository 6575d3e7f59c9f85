/**
 * PostgreSQL full-text matching and `ts_rank` outside PostgreSQL, for the in-process keyword index (keyword-index.ts):
 * a `tsquery` as PostgreSQL prints it is parsed here, matched against one snippet's lexemes with PostgreSQL's phrase
 * semantics, and ranked as `ts_rank(weights, vector, query, 0)` ranks it (src/backend/utils/adt/tsrank.c:
 * calc_rank_or, calc_rank_and), in single precision as there. Only what `phraseto_tsquery` and `||` build is
 * accepted (operands, `|`, `&`, `!`, `<->` and `<N>`); a prefix or weight-restricted operand is refused, so the
 * caller answers in SQL instead.
 */

export type TsQuery =
  | { op: 'lexeme'; lexeme: string }
  | { op: 'or' | 'and'; left: TsQuery; right: TsQuery }
  | { op: 'not'; arg: TsQuery }
  | { op: 'phrase'; distance: number; left: TsQuery; right: TsQuery };

/** One snippet's lexemes: each one's positions, each as PostgreSQL stores it (position | weight << 14, A = 3). */
export type Lexemes = (lexeme: string) => Uint16Array | undefined;

export class UnsupportedQueryError extends Error {}

/** Parses `tsquery_out`'s text; '' (an empty query) is undefined. */
export function parseTsQuery(text: string): TsQuery | undefined {
  let i = 0;
  const space = () => {
    while (text[i] === ' ') i++;
  };
  const fail = (what: string): never => {
    throw new UnsupportedQueryError(`${what} at ${i} in tsquery ${JSON.stringify(text)}`);
  };
  // Priorities as PostgreSQL's: ! binds tightest, then <->, then &, then |.
  const or = (): TsQuery => {
    let left = and();
    for (space(); text[i] === '|'; space()) {
      i++;
      left = { op: 'or', left, right: and() };
    }
    return left;
  };
  const and = (): TsQuery => {
    let left = phrase();
    for (space(); text[i] === '&'; space()) {
      i++;
      left = { op: 'and', left, right: phrase() };
    }
    return left;
  };
  const phrase = (): TsQuery => {
    let left = unary();
    for (space(); text[i] === '<'; space()) {
      const m = /^<(-|\d+)>/.exec(text.slice(i));
      if (!m) fail('a phrase operator');
      i += m![0].length;
      left = { op: 'phrase', distance: m![1] === '-' ? 1 : Number(m![1]), left, right: unary() };
    }
    return left;
  };
  const unary = (): TsQuery => {
    space();
    if (text[i] === '!') {
      i++;
      return { op: 'not', arg: unary() };
    }
    if (text[i] === '(') {
      i++;
      const inner = or();
      space();
      if (text[i] !== ')') fail('a closing parenthesis');
      i++;
      return inner;
    }
    if (text[i] !== "'") fail('an operand');
    let lexeme = '';
    for (i++; ; i++) {
      if (i >= text.length) fail('the end of an operand');
      if (text[i] === "'" && text[i + 1] === "'") lexeme += text[++i];
      else if (text[i] === '\\' && i + 1 < text.length) lexeme += text[++i];
      else if (text[i] === "'") break;
      else lexeme += text[i];
    }
    i++;
    if (text[i] === ':') fail('a prefix or weight restriction');
    return { op: 'lexeme', lexeme };
  };
  space();
  if (i >= text.length) return undefined;
  const q = or();
  space();
  if (i < text.length) fail('trailing text');
  return q;
}

/** The query's distinct operands in PostgreSQL's order (`SortAndUniqItems`: by their bytes), which ts_rank sums in. */
export function operands(q: TsQuery): string[] {
  const into = new Set<string>();
  const walk = (n: TsQuery): void => {
    if (n.op === 'lexeme') into.add(n.lexeme);
    else if (n.op === 'not') walk(n.arg);
    else {
      walk(n.left);
      walk(n.right);
    }
  };
  walk(q);
  return [...into].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

const POSITION = 0x3fff;
const position = (wep: number) => wep & POSITION;
const weightOf = (wep: number) => wep >> 14;

/** PostgreSQL's `@@`: whether a snippet with these lexemes matches the query. */
export function matches(q: TsQuery, lexemes: Lexemes): boolean {
  switch (q.op) {
    case 'lexeme':
      return lexemes(q.lexeme) !== undefined;
    case 'or':
      return matches(q.left, lexemes) || matches(q.right, lexemes);
    case 'and':
      return matches(q.left, lexemes) && matches(q.right, lexemes);
    case 'not':
      return !matches(q.arg, lexemes);
    case 'phrase':
      return phrasePositions(q, lexemes).positions.length > 0;
  }
}

/**
 * A phrase's matches as TS_phrase_execute finds them: for `L <d> R`, each position r of R (its right end) with a
 * match of L ending at r - d - width(R); the phrase's width is d + width(L) + width(R). Inside a phrase only operands
 * and phrases occur in what `phraseto_tsquery` builds.
 */
function phrasePositions(q: TsQuery, lexemes: Lexemes): { positions: number[]; width: number } {
  if (q.op === 'lexeme') return { positions: Array.from(lexemes(q.lexeme) ?? [], position), width: 0 };
  if (q.op !== 'phrase') throw new UnsupportedQueryError(`${q.op} inside a phrase`);
  const left = phrasePositions(q.left, lexemes);
  const right = phrasePositions(q.right, lexemes);
  const ends = new Set(left.positions);
  const offset = q.distance + right.width;
  return { positions: right.positions.filter((r) => ends.has(r - offset)), width: q.distance + left.width + right.width };
}

const f = Math.fround;

/** ts_rank's weight of a word collocation `distance` apart. */
function wordDistance(distance: number): number {
  if (distance > 100) return f(1e-30);
  return f(1 / (1.005 + 0.05 * Math.exp(f(distance) / 1.5 - 2)));
}

/** `ts_rank(weights, vector, query, 0)`; `weights` as in SQL, `{D, C, B, A}`, already single precision; `items`: operands(q). */
export function tsRank(weights: readonly number[], q: TsQuery, lexemes: Lexemes, items = operands(q)): number {
  const res = (q.op === 'and' || q.op === 'phrase') && items.length >= 2 ? rankAnd(weights, items, lexemes) : rankOr(weights, items, lexemes);
  return res < 0 ? f(1e-20) : res;
}

/**
 * What one operand found in a snippet adds to calc_rank_or's sum (before the division by the number of operands):
 * its positions' weights, the heaviest counted in full and each other by 1/i^2. Double precision, as C adds it.
 */
export function orContribution(w: readonly number[], post: Uint16Array, start = 0, end = post.length): number {
  let resj = 0;
  let wjm = -1;
  let jm = 0;
  for (let j = 0; j < end - start; j++) {
    const wj = w[post[start + j]! >> 14]!;
    resj = f(resj + f(wj / ((j + 1) * (j + 1))));
    if (wj > wjm) {
      wjm = wj;
      jm = j;
    }
  }
  return f(f(wjm + resj) - f(wjm / ((jm + 1) * (jm + 1)))) / 1.64493406685;
}

function rankOr(w: readonly number[], items: string[], lexemes: Lexemes): number {
  let res = 0;
  for (const item of items) {
    const post = lexemes(item);
    if (post) res = f(res + orContribution(w, post));
  }
  return items.length ? f(res / items.length) : res;
}

function rankAnd(w: readonly number[], items: string[], lexemes: Lexemes): number {
  let res = -1;
  const seen: Uint16Array[] = [];
  for (const item of items) {
    const post = lexemes(item);
    if (!post) continue;
    for (const ct of seen) {
      for (const a of post) {
        for (const b of ct) {
          const dist = Math.abs(position(a) - position(b));
          if (!dist) continue;
          const curw = f(Math.sqrt(f(f(w[weightOf(a)]! * w[weightOf(b)]!) * wordDistance(dist))));
          res = res < 0 ? curw : f(1 - (1 - res) * (1 - curw));
        }
      }
    }
    seen.push(post);
  }
  return res;
}
