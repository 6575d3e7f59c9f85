/**
 * IP addresses as bytes, and which of them lie inside a network rather than on the public internet. Pure: the
 * outbound guard (outbound/guard.ts) decides with it, and the configuration parses OUTBOUND_ALLOW with it.
 *
 * Hosts are read the way resolvers read them, not only in dotted-quad form: `getaddrinfo` (which git, curl and
 * Node use) takes `2130706433`, `0x7f.1` and `0177.0.0.1` as 127.0.0.1, so those are addresses here too.
 */
export type IpBytes = Uint8Array;

/** One part of a classic `inet_aton` address: decimal, octal (leading 0) or hexadecimal (0x). */
function atonPart(s: string): number | undefined {
  if (/^0x[0-9a-f]*$/i.test(s)) return s.length === 2 ? 0 : parseInt(s.slice(2), 16);
  if (/^0[0-7]*$/.test(s)) return parseInt(s, 8);
  if (/^[1-9][0-9]*$/.test(s)) return Number(s);
  return undefined;
}

/** IPv4 in any form `inet_aton` accepts (1 to 4 parts, the last filling the remaining bytes), or undefined. */
export function parseIPv4(text: string): IpBytes | undefined {
  const s = text.endsWith('.') ? text.slice(0, -1) : text;
  if (!s || s.length > 64) return undefined;
  const parts = s.split('.');
  if (parts.length > 4) return undefined;
  const values = parts.map(atonPart);
  if (values.some((v) => v === undefined || !Number.isFinite(v))) return undefined;
  const nums = values as number[];
  const last = nums.pop()!;
  if (nums.some((v) => v > 255)) return undefined;
  const lastBytes = 4 - nums.length;
  if (last >= 2 ** (8 * lastBytes)) return undefined;
  const out = new Uint8Array(4);
  nums.forEach((v, i) => (out[i] = v));
  for (let i = 0; i < lastBytes; i++) out[3 - i] = Math.floor(last / 2 ** (8 * i)) % 256;
  return out;
}

/** IPv6 (with an embedded dotted IPv4 tail, brackets or a zone allowed), or undefined. */
export function parseIPv6(text: string): IpBytes | undefined {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  if (!s.includes(':') || s.length > 64 || !/^[0-9a-f:.]+$/i.test(s)) return undefined;
  let tail: number[] = [];
  if (s.includes('.')) {
    const at = s.lastIndexOf(':');
    const v4 = s.slice(at + 1);
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(v4)) return undefined;
    const b = v4.split('.').map(Number);
    if (b.some((x) => x > 255)) return undefined;
    tail = [(b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!];
    s = s.slice(0, at + 1);
    if (!s.endsWith('::')) s = s.slice(0, -1);
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const group = (g: string) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN);
  const head = halves[0] ? halves[0].split(':').map(group) : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':').map(group) : [];
  if ([...head, ...rest].some(Number.isNaN)) return undefined;
  const known = head.length + rest.length + tail.length;
  let groups: number[];
  if (halves.length === 2) {
    if (known > 7) return undefined;
    groups = [...head, ...Array<number>(8 - known).fill(0), ...rest, ...tail];
  } else {
    if (known !== 8) return undefined;
    groups = [...head, ...tail];
  }
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** A host name as names compare: lower case, without the root's trailing dot (`Gitea.LAN.` is `gitea.lan`). */
export const hostName = (host: string): string => host.toLowerCase().replace(/\.$/, '');

/** A host that is an address literal (IPv6 in brackets or not, IPv4 in any resolver form), as bytes. */
export function parseIp(host: string): IpBytes | undefined {
  return parseIPv6(host) ?? parseIPv4(host);
}

export function formatIp(b: IpBytes): string {
  if (b.length === 4) return b.join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((b[2 * i]! << 8) | b[2 * i + 1]!).toString(16));
  // The longest run of zero groups (two or more) becomes "::".
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j;
  }
  if (best.len < 2) return groups.join(':');
  return `${groups.slice(0, best.at).join(':')}::${groups.slice(best.at + best.len).join(':')}`;
}

export interface AddressRange {
  bytes: IpBytes;
  prefix: number;
}

/** `10.0.0.0/8`, `fd00::/8`, `[fd00::]/8`, or a single address (a full-length prefix). */
export function parseRange(text: string): AddressRange | undefined {
  const slash = text.lastIndexOf('/');
  const addr = slash === -1 ? text : text.slice(0, slash);
  const bytes = parseIPv6(addr) ?? (/^\d{1,3}(\.\d{1,3}){3}$/.test(addr) ? parseIPv4(addr) : undefined);
  if (!bytes) return undefined;
  const max = bytes.length * 8;
  if (slash === -1) return { bytes, prefix: max };
  const p = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(p) || Number(p) > max) return undefined;
  return { bytes, prefix: Number(p) };
}

export function inRange(b: IpBytes, r: AddressRange): boolean {
  if (b.length !== r.bytes.length) return false;
  for (let bit = 0; bit < r.prefix; bit += 8) {
    const take = Math.min(8, r.prefix - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    if ((b[bit / 8]! & mask) !== (r.bytes[bit / 8]! & mask)) return false;
  }
  return true;
}

const range = (text: string): AddressRange => parseRange(text)!;

/** Ranges that are not the public internet, most specific first, with what to call them. */
const SPECIAL_V4: [AddressRange, string][] = [
  [range('169.254.169.254/32'), 'cloud metadata'],
  [range('169.254.170.2/32'), 'cloud metadata'],
  [range('100.100.100.200/32'), 'cloud metadata'],
  [range('0.0.0.0/8'), 'unspecified ("this network")'],
  [range('10.0.0.0/8'), 'private'],
  [range('100.64.0.0/10'), 'shared (carrier-grade NAT)'],
  [range('127.0.0.0/8'), 'loopback'],
  [range('169.254.0.0/16'), 'link-local'],
  [range('172.16.0.0/12'), 'private'],
  [range('192.0.0.0/24'), 'reserved (IETF protocol assignments)'],
  [range('192.0.2.0/24'), 'reserved (documentation)'],
  [range('192.88.99.0/24'), 'reserved (6to4 relay)'],
  [range('192.168.0.0/16'), 'private'],
  [range('198.18.0.0/15'), 'reserved (benchmarking)'],
  [range('198.51.100.0/24'), 'reserved (documentation)'],
  [range('203.0.113.0/24'), 'reserved (documentation)'],
  [range('224.0.0.0/4'), 'multicast'],
  [range('240.0.0.0/4'), 'reserved (including broadcast)'],
];

/** IPv6 ranges that carry an IPv4 address: what they reach is decided by that address. */
const EMBEDDING_V6: [AddressRange, number][] = [
  [range('::ffff:0:0/96'), 12], // IPv4-mapped
  [range('::ffff:0:0:0/96'), 12], // IPv4-translated (SIIT)
  [range('64:ff9b::/96'), 12], // NAT64, well-known prefix
  [range('2002::/16'), 2], // 6to4
];

const SPECIAL_V6: [AddressRange, string][] = [
  [range('fd00:ec2::254/128'), 'cloud metadata'],
  [range('::/128'), 'unspecified'],
  [range('::1/128'), 'loopback'],
  [range('::/96'), 'reserved (IPv4-compatible)'],
  [range('64:ff9b:1::/48'), 'reserved (local NAT64)'],
  [range('100::/64'), 'reserved (discard)'],
  [range('2001::/32'), 'reserved (Teredo)'],
  [range('2001:2::/48'), 'reserved (benchmarking)'],
  [range('2001:db8::/32'), 'reserved (documentation)'],
  [range('3fff::/20'), 'reserved (documentation)'],
  [range('fc00::/7'), 'private (unique local)'],
  [range('fe80::/10'), 'link-local'],
  [range('fec0::/10'), 'site-local'],
  [range('ff00::/8'), 'multicast'],
];

/** The IPv4 address an IPv6 one stands for (mapped, translated, NAT64, 6to4), if any. */
export function embeddedIPv4(b: IpBytes): IpBytes | undefined {
  if (b.length !== 16) return undefined;
  for (const [r, at] of EMBEDDING_V6) if (inRange(b, r)) return b.slice(at, at + 4);
  return undefined;
}

/**
 * What kind of non-public address this is (`loopback`, `private`, `link-local`, `cloud metadata`, ...), or
 * undefined for a public one.
 */
export function specialKind(b: IpBytes): string | undefined {
  if (b.length === 4) return SPECIAL_V4.find(([r]) => inRange(b, r))?.[1];
  const v4 = embeddedIPv4(b);
  if (v4) return specialKind(v4);
  return SPECIAL_V6.find(([r]) => inRange(b, r))?.[1];
}
