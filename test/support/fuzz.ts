import { prng } from '../docindex/parse/helpers.js';

/**
 * Seeded generators of malformed requests for the fuzz test (test/security/fuzz.test.ts). Everything is drawn from
 * one `Rng`, in order, so a seed replays the same requests.
 */

/** A seeded source of choices (test/docindex/parse/helpers.ts's mulberry32): the same sequence for a seed on every machine. */
export class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = prng(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** A seed per name (a route family), so one family can be replayed on its own. */
export function seedFor(seed: number, name: string): number {
  let h = seed >>> 0;
  for (const c of name) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

/** Unicode that breaks naive code: surrogates (paired and not), RTL overrides, combining marks, BOM, noncharacters. */
const UNICODE = ['é', 'ß', '中文', '😀', '\u{1F3F3}\u{FE0F}\u{200D}\u{1F308}', '\u202E', '\u0301', '\uFEFF', '\uFFFF', '\uD800', '\uDC00', 'İ', 'ǅ', '\u2028', '\u0085', 'Ω', 'ﬁ'];

export function unicodeString(r: Rng, length: number): string {
  let s = '';
  while (s.length < length) s += r.chance(0.5) ? r.pick(UNICODE) : String.fromCharCode(32 + r.int(95));
  return s;
}

/** Strings no field expects: empty, huge, unicode, NUL, traversal, internal URLs, option-like, number-like. */
export function weirdString(r: Rng): string {
  switch (r.int(16)) {
    case 0:
      return '';
    case 1:
      return ' \t\n ';
    case 2:
      return 'x'.repeat(r.pick([300, 5_000, 100_000]));
    case 3:
      return unicodeString(r, 1 + r.int(400));
    case 4:
      return `a\u0000b${'\u0000'.repeat(r.int(3))}`;
    case 5:
      return r.pick(['../../../../etc/passwd', '..\\..\\windows\\win.ini', '/etc', '/', '~/.ssh/id_rsa', '/proc/self/environ']);
    case 6:
      return r.pick(['http://127.0.0.1:1/', 'http://169.254.169.254/latest/meta-data/', 'file:///etc/passwd', 'javascript:alert(1)', 'gopher://x', 'https://', 'http://[::1', 'https://example.com/' + 'a'.repeat(3000)]);
    case 7:
      return r.pick(['-ox@x:o/r', '--upload-pack=touch /tmp/x', '-h', '--', '@']);
    case 8:
      return r.pick(['1e309', '-1', 'NaN', 'Infinity', '0x10', '9'.repeat(400), '-0', '1.5', '  7  ', '']);
    case 9:
      return '😀'.repeat(1 + r.int(2000));
    case 10:
      return r.pick(["'; drop table job; --", '" or 1=1 --', '$(id)', '`id`', '${7*7}', '{{7*7}}', '%s%s%n', '<script>alert(1)</script>']);
    case 11:
      return r.pick(['%00', '%ZZ', '%E2%80%AE', '%C0%AE%C0%AE', '%2e%2e%2f']);
    case 12:
      return 'A'.repeat(r.pick([1_000, 50_000, 200_000]));
    case 13:
      return r.pick(['/owner/repo', '/a/b/v1.0.0', '/a/b@main', '//', '/a', '/a/b/c/d/e', '/local/x']);
    case 14:
      return '\uD800'.repeat(1 + r.int(50));
    default:
      return String.fromCharCode(...Array.from({ length: 1 + r.int(64) }, () => r.int(0x10000)));
  }
}

/** Any JSON value at all, mostly of a type the field does not take. */
export function weirdValue(r: Rng): unknown {
  switch (r.int(12)) {
    case 0:
      return r.pick([0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, -0]);
    case 1:
      return r.chance(0.5);
    case 2:
      return null;
    case 3:
      return [];
    case 4:
      return Array.from({ length: r.int(200) }, () => weirdString(r).slice(0, 50));
    case 5:
      return {};
    case 6:
      return { a: { b: { c: weirdString(r).slice(0, 100) } } };
    case 7:
      return nested(r.pick([10, 63, 65, 500]));
    default:
      return weirdString(r);
  }
}

/** Arrays inside arrays, `depth` deep. */
export function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

/** JSON text that is not JSON, or not what a parser expects. */
export function badJson(r: Rng, good: string): string | Buffer {
  switch (r.int(12)) {
    case 0:
      return good.slice(0, r.int(Math.max(good.length, 1)));
    case 1:
      return r.pick(['{', '[', '"', 'nul', 'tru', '{"a":}', '{,}', '{"a" 1}', "{'a': 1}", '01', '[1,]', '{"a":1,}']);
    case 2:
      return Buffer.from(Array.from({ length: 1 + r.int(512) }, () => r.int(256)));
    case 3:
      return '\uFEFF' + good;
    case 4:
      return good + r.pick(['garbage', '}', '\u0000', ' {"b":2}']);
    case 5:
      return '['.repeat(r.pick([100, 10_000, 100_000])) + ']'.repeat(r.pick([0, 100, 100_000]));
    case 6:
      return '{"a":' + '"' + 'x'.repeat(r.pick([1000, 1_200_000])) + '"}';
    case 7:
      return good.replace(/"/g, "'");
    case 8:
      return '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}';
    case 9:
      return `{"a": "\\u0000", "b": "\\ud800", "c": "\\uDFFF"}`;
    case 10:
      return '';
    default:
      return `{"a": ${'1'.repeat(400)}, "b": 1e99999, "c": -0.0e-99999}`;
  }
}

/** A multipart body gone wrong: no end, no boundary, odd names, too many parts, huge fields. */
export function badMultipart(r: Rng): { type: string; body: string | Buffer } {
  const b = r.pick(['B', 'x'.repeat(70), '----WebKitFormBoundary7MA4YWxkTrZu0gW', '']);
  const type = `multipart/form-data${b ? `; boundary=${b}` : ''}`;
  const part = (headers: string, content: string) => `--${b}\r\n${headers}\r\n\r\n${content}\r\n`;
  const file = (name: string, ctype = 'audio/wav') => `Content-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${ctype}`;
  switch (r.int(11)) {
    case 0:
      return { type, body: `--${b}\r\n${file('a.wav')}\r\n\r\nRIFF` };
    case 1:
      return { type, body: `--${b}\r\nContent-Disposition: form-data; name="other"; filename="a.txt"\r\n\r\nxx` };
    case 2:
      return { type: 'multipart/form-data', body: part(file('a.wav'), 'RIFF') + `--${b}--\r\n` };
    case 3:
      return { type, body: part(file(r.pick(['../../etc/passwd.wav', 'a\u0000.wav', 'x'.repeat(5000) + '.wav', '.wav', 'CON.wav', unicodeString(r, 30) + '.mp3'])), 'RIFF....') + `--${b}--\r\n` };
    case 4:
      return { type, body: Array.from({ length: 100 }, (_, i) => part(`Content-Disposition: form-data; name="f${i}"`, 'v')).join('') + `--${b}--\r\n` };
    case 5:
      return { type, body: part('Content-Disposition: form-data; name="title"', 'x'.repeat(200_000)) + part(file('a.wav'), 'RIFF') + `--${b}--\r\n` };
    case 6:
      return { type, body: part('Content-Disposition: form-data', 'no name') + part(file('a.wav'), '') + `--${b}--\r\n` };
    case 7:
      return { type, body: part(file('a.wav'), 'RIFF') + part(file('b.wav'), 'RIFF') + part('Content-Disposition: form-data; name="mode"', weirdString(r).slice(0, 100)) + `--${b}--\r\n` };
    case 8:
      return { type, body: Buffer.from(Array.from({ length: 2048 }, () => r.int(256))) };
    case 9:
      return { type, body: `--${b}--\r\n` };
    default:
      return { type, body: part(file('a.wav', 'text/html'), '<html>') + part('Content-Disposition: form-data; name="source"', 'recording\u0000') + `--${b}--\r\n` };
  }
}

/** Percent-encodes any string, lone surrogates included (as UTF-8 encodes them: U+FFFD), unlike encodeURIComponent. */
export function pct(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9_.~-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
