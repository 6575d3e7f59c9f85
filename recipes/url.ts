import { ValidationError } from '../core/errors.js';

/**
 * Post URLs. What is fetched is the URL as given, minus its fragment and tracking parameters; what identifies a
 * post (the dedupe key) further ignores the spelling differences share links have:
 *
 * - `http` and `https` alike; the host in lower case (the URL parser does this), default ports dropped, `www.` and
 *   `m.` removed;
 * - the fragment removed (`#...` never reaches the server);
 * - tracking parameters removed: `utm_*`, `fbclid`, `gclid`, `dclid`, `gbraid`, `wbraid`, `msclkid`, `igsh`,
 *   `igshid`, `mc_cid`, `mc_eid`, `si`, `ref_src`, `_ga`; the others sorted by name;
 * - a trailing slash of the path removed (`/p/Cx1/` and `/p/Cx1` are one post). The path's case is kept: post ids
 *   are case-sensitive.
 *
 * So `https://www.instagram.com/p/Cx1/?igsh=abc&utm_source=ig` and `https://instagram.com/p/Cx1` are one item.
 */
const TRACKING = /^(utm_.*|fbclid|gclid|dclid|gbraid|wbraid|msclkid|igsh|igshid|mc_cid|mc_eid|si|ref_src|_ga)$/i;

export interface PostUrl {
  /** What is fetched and shown. */
  url: string;
  /** The comparison key. */
  key: string;
}

/** `pointer`: where the URL was in the request, for the error's details. */
export function normalizePostUrl(raw: string, pointer = '/body/url'): PostUrl {
  const invalid: (message: string) => never = (message) => {
    throw new ValidationError(message, 'INVALID_URL', [{ pointer, message }]);
  };
  const text = raw.trim();
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    invalid('url must be an absolute http or https URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') invalid(`url must be an http or https URL, not ${u.protocol.replace(/:$/, '')}`);
  if (!u.hostname) invalid('url has no host');
  if (u.username || u.password) invalid('url must not carry credentials');
  u.hash = '';
  for (const name of [...u.searchParams.keys()]) if (TRACKING.test(name)) u.searchParams.delete(name);
  const url = u.toString();

  const k = new URL(url);
  k.protocol = 'https:';
  k.hostname = k.hostname.replace(/^(www|m)\./, '');
  k.searchParams.sort();
  if (k.pathname.length > 1) k.pathname = k.pathname.replace(/\/+$/, '');
  return { url, key: k.toString() };
}
