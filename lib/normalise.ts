// The dedupe keys of a contact (DESIGN.md: a contact is deduplicated on normalised email and
// normalised professional-network profile URL). Small on purpose: both sides of a comparison must
// go through the same function, so changing a rule here changes what counts as "the same person".

/** Trimmed and lower-cased; `null` for nothing usable. */
export function normaliseEmail(email: string | null | undefined): string | null {
  const e = email?.trim().toLowerCase();
  return e ? e : null;
}

/**
 * `https://<host><path>`: scheme-less input is read as https, the scheme is always https, the host is
 * lower-cased without `www.`, and query, fragment and trailing slashes are dropped (tracking
 * parameters and `/` variations name the same profile). The path keeps its case. `null` when the
 * input is not an http(s) URL with a host and no credentials.
 */
export function normaliseProfileUrl(url: string | null | undefined): string | null {
  const raw = url?.trim();
  if (!raw) return null;
  let u: URL;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`);
  } catch {
    return null;
  }
  // Credentials mean the input was not a profile URL (`mailto:a@b.c` read as https://user:pass@host).
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname || u.username || u.password) return null;
  const host = u.host.toLowerCase().replace(/^www\./, '');
  const path = u.pathname.replace(/\/+$/, '');
  return `https://${host}${path}`;
}
