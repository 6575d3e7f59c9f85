/**
 * One byte range of a `Range` header (RFC 9110, 14.2), as `<audio>` elements ask for them to seek: `bytes=a-b`,
 * `bytes=a-`, `bytes=-n`. Undefined: no usable range (absent, several ranges, another unit), the whole file is sent;
 * `unsatisfiable`: 416.
 */
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}
