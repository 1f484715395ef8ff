// Pieces of Unipile's v1 wire format shared by the adapter's parts (/work/unipile-notes.md §0):
// ids, ISO dates, 0/1 flags, `{ object, items, cursor }` lists, and LinkedIn's profile URLs.
import { z } from 'zod';
import type { JsonHttpClient } from '../../provider-http.js';

export const uid = z.string().trim().min(1).max(200);

/** An ISO 8601 date (Unipile's `2023-09-24T13:49:07.965Z`). */
export const when = z.string().transform((s, ctx) => {
  const t = Date.parse(s);
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}/.test(s)) {
    ctx.addIssue({ code: 'custom', message: 'not an ISO date' });
    return z.NEVER;
  }
  return new Date(t);
});

/** Unipile's boolean-ish fields are the numbers 0/1 (sometimes booleans). */
export const flag = z
  .union([z.number(), z.boolean()])
  .nullish()
  .transform((v) => v === true || (typeof v === 'number' && v !== 0));

/** Free text as given (null when absent). */
export const text = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => v ?? null);

/** A `{ object, items, cursor }` list; `cursor: null` (or absent) is the last page. */
export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item).max(1000),
    cursor: z
      .string()
      .max(4000)
      .nullish()
      .transform((v) => v || null),
  });

export const seg = encodeURIComponent;

/** A query with the given values (absent ones left out). */
export function query(values: Record<string, string | number | null | undefined>): URLSearchParams {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  return q;
}

/** LinkedIn's profile URL of a public identifier, the form Unipile's own payloads use. */
export const linkedinProfileUrl = (publicIdentifier: string) =>
  `https://www.linkedin.com/in/${encodeURIComponent(publicIdentifier)}/`;

/** A LinkedIn member id as Unipile gives it: `ACo…` (Classic), `ACw…` (Sales Navigator), `AE…` (Recruiter). */
export const isProviderId = (s: string) => /^(?:ACo|ACw|AE)[A-Za-z0-9_-]{8,}$/.test(s);

/**
 * What `GET /users/{identifier}` takes for a recipient: the slug of a profile URL (`…/in/<slug>/…`),
 * or a bare public identifier or provider id. Null when it is none of these.
 */
export function identifierOf(recipient: string): string | null {
  const r = recipient.trim();
  if (!r) return null;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(r) || /^(?:[a-z0-9-]+\.)*linkedin\.com\//i.test(r)) {
    let url: URL;
    try {
      url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(r) ? r : `https://${r}`);
    } catch {
      return null;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
    let segments: string[];
    try {
      segments = url.pathname
        .split('/')
        .filter(Boolean)
        .map((s) => decodeURIComponent(s));
    } catch {
      return null;
    }
    const i = segments.findIndex((s) => s.toLowerCase() === 'in');
    const slug = i >= 0 ? segments[i + 1] : undefined;
    return slug && slug.length <= 200 && !/[\s/?#]/.test(slug) ? slug : null;
  }
  return /^[\p{L}\p{N}_%.~-]{1,200}$/u.test(r) ? r : null;
}

/** Pages through a list (at most `maxPages`), stopping at the first item `pick` accepts. */
export async function findInPages<T, R>(
  page: (cursor: string | null) => Promise<{ items: T[]; cursor: string | null }>,
  pick: (item: T) => R | null,
  maxPages: number,
): Promise<R | null> {
  let cursor: string | null = null;
  for (let n = 0; n < maxPages; n++) {
    const p = await page(cursor);
    for (const item of p.items) {
      const hit = pick(item);
      if (hit !== null) return hit;
    }
    if (!p.cursor) return null;
    cursor = p.cursor;
  }
  return null;
}

/** The client's error for a call that cannot be made (refused before it is sent). */
export const refuse = (http: Pick<JsonHttpClient, 'fail'>, reason: string, message: string) =>
  http.fail('invalid_request', message, { reason });
