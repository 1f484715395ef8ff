// Canonical forms of the identifiers contacts are deduplicated on (DESIGN.md: a contact is
// deduplicated on normalised email and normalised professional-network profile URL). Each function
// returns null for input that is not a usable identifier, so a bad value never matches anything.
// Everything is NFC-normalised first, so composed and decomposed spellings ("ü" vs "u" + U+0308)
// compare equal; host names come out in ASCII (punycode), as the URL parser gives them.
import { domainToASCII } from 'node:url';

/** The professional network's profile hosts (the local corpus uses pronet.example). */
export const DEFAULT_NETWORK_HOSTS: readonly string[] = ['pronet.example'];

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/** A DNS name in lower-case ASCII with at least two labels, or null. No IP literals. */
function hostName(raw: string): string | null {
  const ascii = domainToASCII(raw.normalize('NFC').trim().replace(/\.$/, ''));
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || !TLD.test(labels[labels.length - 1])) return null;
  return ascii;
}

// atext of RFC 5322 plus Unicode letters, marks and digits (RFC 6531); dots only between atoms.
const ATOM = "[\\p{L}\\p{M}\\p{N}!#$%&'*+/=?^_`{|}~-]+";
const LOCAL_PART = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`, 'u');

/**
 * Trimmed, NFC, lower-cased (local part too: providers treat it case-insensitively in practice),
 * an optional `mailto:` dropped, the domain in ASCII. No provider-specific rewriting (dots,
 * `+tags`): those are distinct addresses in general. Null when not a plausible address.
 */
export function normaliseEmail(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const s = raw
    .normalize('NFC')
    .trim()
    .replace(/^mailto:/i, '');
  if (s.length === 0 || s.length > 254) return null;
  const at = s.lastIndexOf('@');
  if (at <= 0 || s.indexOf('@') !== at) return null;
  const local = s.slice(0, at).toLowerCase();
  if (local.length > 64 || !LOCAL_PART.test(local)) return null;
  const domain = hostName(s.slice(at + 1));
  return domain ? `${local}@${domain}` : null;
}

/**
 * A company domain from a bare domain, a URL or an email address: lower-case ASCII, no `www.`,
 * port, path or trailing dot. Null when there is no valid DNS name.
 */
export function normaliseDomain(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  let s = raw.normalize('NFC').trim();
  if (!s.includes('://') && s.includes('@')) s = s.slice(s.lastIndexOf('@') + 1);
  let host: string;
  try {
    host = new URL(s.includes('://') ? s : `http://${s}`).hostname;
  } catch {
    return null;
  }
  const name = hostName(host);
  return name ? name.replace(/^www\./, '') : null;
}

const PROFILE_PREFIXES = new Set(['in', 'profile', 'people', 'pub']);
const LOCALE = /^[a-z]{2}(?:[-_][a-z]{2})?$/i;

/**
 * One canonical form per profile:
 * - any URL: `https`, host lower-case ASCII without `www.`, no credentials, query, fragment,
 *   empty segments or trailing slash; path segments percent-decoded, NFC, then re-encoded the
 *   same way (so `%C3%BC`, `%c3%bc`, `ü` and `u%CC%88` are one spelling);
 * - on the network's hosts (and their subdomains: `m.`, country `de.`), every profile path form —
 *   `/in/<slug>`, `/profile/<slug>`, `/people/<slug>`, `/pub/<slug>`, behind an optional locale or
 *   `m` segment (`/de/in/<slug>`), followed by sub-pages (`/in/<slug>/details/…`) or a language
 *   (`/in/<slug>/fr`) — becomes `https://<network host>/in/<slug>` with the slug lower-cased
 *   (slugs are case-insensitive there). Elsewhere the path keeps its case.
 * Null when the input is not an http(s) URL (a missing scheme is taken as https).
 */
export function normaliseProfileUrl(
  raw: string | null | undefined,
  networkHosts: readonly string[] = DEFAULT_NETWORK_HOSTS,
): string | null {
  if (typeof raw !== 'string') return null;
  let s = raw.normalize('NFC').trim();
  if (!s) return null;
  if (!/^[a-z][a-z0-9+.-]*:/i.test(s)) s = `https://${s.replace(/^\/\//, '')}`;
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const host = url.hostname.replace(/\.$/, '').replace(/^www\./, '');
  if (!host) return null;
  let segments: string[];
  try {
    segments = url.pathname
      .split('/')
      .filter(Boolean)
      .map((seg) => decodeURIComponent(seg).normalize('NFC'));
  } catch {
    return null; // malformed percent-encoding
  }
  const network = networkHosts.find((h) => host === h || host.endsWith(`.${h}`));
  if (network) {
    const i = segments.findIndex((seg) => PROFILE_PREFIXES.has(seg.toLowerCase()));
    const lead = i >= 0 ? segments.slice(0, i) : [];
    if (
      i >= 0 &&
      segments[i + 1] &&
      lead.length <= 2 &&
      lead.every((seg) => seg.toLowerCase() === 'm' || LOCALE.test(seg))
    ) {
      return `https://${network}/in/${encodeURIComponent(segments[i + 1].toLowerCase())}`;
    }
  }
  const port = url.port ? `:${url.port}` : '';
  return `https://${host}${port}${segments.length ? '/' : ''}${segments.map(encodeURIComponent).join('/')}`;
}

export interface DedupeKeys {
  email: string | null;
  profileUrl: string | null;
  /** `email:<…>` and `profile:<…>` for whichever is known, for in-memory sets. */
  keys: string[];
}

/** The normalised identifiers an existing contact is looked up by (either one matching is a match). */
export function dedupeKeys(
  person: { email?: string | null; profileUrl?: string | null },
  networkHosts?: readonly string[],
): DedupeKeys {
  const email = normaliseEmail(person.email);
  const profileUrl = normaliseProfileUrl(person.profileUrl, networkHosts);
  const keys: string[] = [];
  if (email) keys.push(`email:${email}`);
  if (profileUrl) keys.push(`profile:${profileUrl}`);
  return { email, profileUrl, keys };
}
