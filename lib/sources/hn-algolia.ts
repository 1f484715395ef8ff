// The newsforum source as Hacker News, through its public search API (HN Search by Algolia; no key).
// Wire format from the API's own page (hn.algolia.com/api; docs/newsforum.md has the mapping):
//
//   GET {base}/search_by_date?query=<q>&tags=(story,comment)
//       &numericFilters=created_at_i>=<lo>,created_at_i<<hi>&page=<n>&hitsPerPage=<limit>
//     → 200 { hits: [{ objectID, title, url, author, points, story_text, comment_text, story_id,
//             parent_id, story_title, created_at, created_at_i, num_comments, _tags,
//             _highlightResult }], nbHits, page, nbPages, hitsPerPage, … }
//   GET {base}/users/<username>   → 200 { username, about, karma } | 404
//   Errors: Algolia's `{ message, status }` (mapped by `hnErrorOf`); 10,000 requests per hour per IP.
//
// Mapping. A query's keywords (any of them; a multi-word one as a phrase) become one search per
// keyword, in order: the keyword as Algolia's query (a phrase in quotes), newest first
// (`search_by_date`), stories and comments (`tags=(story,comment)`), inside a time window pinned by
// the first page: from the signal's `since` (else HN_SEARCH_WINDOW_DAYS back) to that moment, so
// later posts cannot shift the pages under the cursor. Algolia matches prefixes, typos and a
// comment's story title; a hit is kept only when its own text mentions the keyword as our contract
// says (whole words, case-insensitive, phrases in order), and only under the first keyword it
// mentions, so an item found by two keywords is one candidate. Our cursor wraps (keyword, Algolia
// page) with the pinned window, the page size and a fingerprint of the query.
//
// HN knows a username and nothing else about a person: candidates carry the username as their
// name and external id, and no profile URL (HN's user page, news.ycombinator.com/user?id=…, is
// identified by its query, which profile-URL normalisation drops: every author would become one
// person). The run qualifies them on the evidence text.
import { createHash } from 'node:crypto';
import { convert } from 'html-to-text';
import { z } from 'zod';
import { HN_SEARCH_DEFAULT_BASE_URL } from '../config.js';
import type { JsonHttpClient } from '../provider-http.js';
import { PaceExceeded, ProviderPace, type Rate } from '../provider-pace.js';
import { parseWire, sourceClient, type HttpSourceOptions } from './http-client.js';
import {
  checkPage,
  checkQuery,
  signalKey,
  SourceError,
  type Candidate,
  type CandidatePage,
  type DiscoverySource,
  type Evidence,
  type PageRequest,
  type SignalKind,
  type SignalQuery,
} from './types.js';
import { tokenize } from './words.js';

/** "We are limiting the number of API requests from a single IP to 10,000 per hour." */
export const HN_REQUESTS_PER_HOUR = 10_000;
/** Algolia's `hitsPerPage` bound; ours (MAX_PAGE_LIMIT, 200) is below it. */
export const HN_HITS_PER_PAGE_MAX = 1000;
/** The tags every search sends: stories or comments. */
export const HN_TAGS = '(story,comment)';
/** Algolia calls one of our pages may make while it is still empty (hits none of which mention the keyword). */
const MAX_CALLS_PER_PAGE = 10;
/** Evidence text is clipped to this many characters (a long comment stays a readable excerpt). */
const MAX_TEXT = 4000;
const HN_WEB = 'https://news.ycombinator.com';

export const hnItemUrl = (id: string) => `${HN_WEB}/item?id=${encodeURIComponent(id)}`;
export const hnUserUrl = (username: string) => `${HN_WEB}/user?id=${encodeURIComponent(username)}`;

/**
 * A token bucket within `perHour` over any hour: the burst plus an hour's refills stay under it
 * (10,000/h: 50 at once, then one every 362 ms).
 */
export function hnRate(perHour: number): Rate {
  const burst = Math.max(1, Math.min(50, Math.floor(perHour / 100)));
  return { burst, everyMs: Math.ceil(3_600_000 / Math.max(1, perHour - burst)) };
}

export interface HnAlgoliaOptions extends Omit<HttpSourceOptions, 'apiKey' | 'keyHeader' | 'errorOf' | 'baseUrl'> {
  /** HN_SEARCH_BASE_URL (default https://hn.algolia.com/api/v1); a path prefix is kept. */
  baseUrl?: string;
  /** HN_SEARCH_REQUESTS_PER_HOUR: this instance's pace (default 10,000). */
  requestsPerHour?: number;
  /** HN_SEARCH_WINDOW_DAYS: how far back a query without `since` searches (default 30). */
  windowDays?: number;
  /** Clock (tests). */
  now?: () => number;
  /** The pace (tests pass one on a simulated clock); default a bucket at `requestsPerHour`. */
  pace?: ProviderPace;
}

// ---------------------------------------------------------------------------------------------
// Wire schemas: only what is used; unknown fields ignored, odd optional values dropped.

const str = z.string().max(1_000_000);
const opt = <T extends z.ZodType>(t: T) => t.nullish().transform((v) => v ?? null);

const hitSchema = z.object({
  objectID: z.union([z.string().min(1).max(100), z.number().int()]).transform(String),
  // Deleted items have no author: they are skipped.
  author: opt(z.string().max(100)).catch(null),
  created_at: opt(z.iso.datetime({ offset: true })).catch(null),
  created_at_i: opt(z.number().int()).catch(null),
  title: opt(str).catch(null),
  url: opt(str).catch(null),
  story_text: opt(str).catch(null),
  comment_text: opt(str).catch(null),
  _tags: z.array(z.string().max(200)).max(100).catch([]),
});
type Hit = z.infer<typeof hitSchema>;

const searchSchema = z.object({
  hits: z.array(hitSchema).max(HN_HITS_PER_PAGE_MAX),
  page: z.number().int().min(0),
  nbPages: z.number().int().min(0),
});

const userSchema = z.object({ username: z.string().min(1).max(100), about: opt(str).catch(null) });

const cursorSchema = z.object({
  v: z.literal(1),
  /** Fingerprint of the query. */
  f: z.string(),
  /** The keyword being searched (index), and Algolia's page of it. */
  k: z.number().int().min(0),
  p: z.number().int().min(0),
  /** hitsPerPage, pinned by the first page. */
  n: z.number().int().min(1).max(HN_HITS_PER_PAGE_MAX),
  /** The window, in Unix seconds: created_at_i >= lo and < hi. */
  lo: z.number().int(),
  hi: z.number().int(),
});
type CursorState = z.infer<typeof cursorSchema>;

// ---------------------------------------------------------------------------------------------

/** HN's HTML (comment_text, story_text, about) as plain text: entities decoded, paragraphs kept, links as their text. */
export function hnPlainText(html: string | null): string {
  if (!html) return '';
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
    ],
  })
    .replace(/[ \t\u00a0]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Algolia's error body `{ message, status }` (or none) as a SourceError by status. */
export function hnErrorOf(status: number, body: unknown, retryAfterSeconds: number | null): SourceError | null {
  if (status < 400) return null;
  const said =
    body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string'
      ? `: ${(body as { message: string }).message}`
      : '';
  const message = `HTTP ${status}${said}`.slice(0, 300);
  if (status === 429)
    return new SourceError(
      'newsforum',
      'rate_limited',
      `${message} (HN Search allows 10,000 requests per hour per IP)`,
      {
        status,
        retryAfterSeconds,
      },
    );
  // No key is involved: a refusal is of this address ("blacklisted" in the API's words).
  if (status === 401 || status === 403)
    return new SourceError('newsforum', 'auth', `${message} (HN Search refused this address)`, { status });
  if (status === 408 || status === 504) return new SourceError('newsforum', 'timeout', message, { status });
  if (status >= 500) return new SourceError('newsforum', 'unavailable', message, { status, retryAfterSeconds });
  if (status === 400 || status === 422) return new SourceError('newsforum', 'invalid_request', message, { status });
  return new SourceError('newsforum', 'bad_response', `${message} (is HN_SEARCH_BASE_URL the API's /api/v1?)`, {
    status,
  });
}

/** Our keyword as Algolia's query: its words, in quotes when several (a phrase). */
const algoliaQuery = (words: readonly string[]) => (words.length > 1 ? `"${words.join(' ')}"` : (words[0] ?? ''));

/** Whether `text` (space-padded tokens) contains the keyword's words in order. */
const mentions = (padded: string, words: readonly string[]) =>
  words.length === 0 || padded.includes(` ${words.join(' ')} `);

export class HnAlgoliaNewsforum implements DiscoverySource {
  readonly name = 'newsforum' as const;
  private readonly http: JsonHttpClient;
  private readonly pace: ProviderPace;
  /** The pace's key: the budget is per IP towards the service, so per base URL here. */
  private readonly paceKey: string;
  private readonly windowDays: number;
  private readonly now: () => number;

  constructor(opts: HnAlgoliaOptions = {}) {
    const baseUrl = opts.baseUrl ?? HN_SEARCH_DEFAULT_BASE_URL;
    this.http = sourceClient('newsforum', {
      ...opts,
      baseUrl,
      apiKey: '',
      keyHeader: null,
      errorOf: hnErrorOf,
    });
    this.now = opts.now ?? Date.now;
    this.pace = opts.pace ?? new ProviderPace(hnRate(opts.requestsPerHour ?? HN_REQUESTS_PER_HOUR));
    this.paceKey = new URL(baseUrl).origin;
    this.windowDays = opts.windowDays ?? 30;
  }

  supports(kind: SignalKind): boolean {
    return kind === 'post_keywords';
  }

  async search(raw: SignalQuery, page: PageRequest, signal?: AbortSignal): Promise<CandidatePage> {
    signal?.throwIfAborted();
    checkPage(this.name, page);
    const query = checkQuery(this.name, raw);
    if (!this.supports(query.kind))
      throw new SourceError(this.name, 'invalid_request', `signal kind ${query.kind} is not served by newsforum`);
    // Keywords without a word (punctuation only) match nothing; none at all: every story and comment.
    const keywords = (query.keywords ?? []).map(tokenize);
    const steps = keywords.length === 0 ? [[]] : keywords.filter((w) => w.length > 0);
    const since = query.filters?.since ? Date.parse(query.filters.since) : null;
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([keywords, since]))
      .digest('base64url')
      .slice(0, 16);

    let state: CursorState | null;
    if (page.cursor === undefined) {
      if (steps.length === 0) return { candidates: [], nextCursor: null };
      const hi = Math.floor(this.now() / 1000);
      const lo = since !== null ? Math.ceil(since / 1000) : hi - this.windowDays * 86_400;
      state = { v: 1, f: fingerprint, k: 0, p: 0, n: Math.min(page.limit, HN_HITS_PER_PAGE_MAX), lo, hi };
    } else {
      state = this.decodeCursor(page.cursor, fingerprint, steps.length);
      if (page.limit < state.n)
        throw new SourceError(
          this.name,
          'invalid_request',
          `this cursor continues pages of ${state.n}: ask for that many`,
        );
    }

    const out: Candidate[] = [];
    for (let calls = 0; state && out.length === 0 && calls < MAX_CALLS_PER_PAGE; calls++) {
      const s: CursorState = state;
      const res = await this.call(
        '/search_by_date',
        new URLSearchParams({
          query: algoliaQuery(steps[s.k]),
          tags: HN_TAGS,
          numericFilters: `created_at_i>=${s.lo},created_at_i<${s.hi}`,
          page: String(s.p),
          hitsPerPage: String(s.n),
        }),
        signal,
      );
      const body = parseWire(this.http, searchSchema, res);
      for (const hit of body.hits.slice(0, s.n)) {
        const c = this.fromHit(hit, steps, s.k);
        if (c) out.push(c);
      }
      // Algolia's page/nbPages: the keyword goes on while there are pages, then the next keyword.
      const more = body.hits.length > 0 && body.page + 1 < body.nbPages;
      state = more ? { ...s, p: s.p + 1 } : s.k + 1 < steps.length ? { ...s, k: s.k + 1, p: 0 } : null;
    }
    return { candidates: out, nextCursor: state ? Buffer.from(JSON.stringify(state)).toString('base64url') : null };
  }

  /** A Hacker News user page (news.ycombinator.com/user?id=…): GET /users/{username}; null when unknown. */
  async profile(url: string, signal?: AbortSignal): Promise<Candidate | null> {
    const username = usernameOf(url);
    if (!username) return null;
    const raw = await this.call(`/users/${encodeURIComponent(username)}`, undefined, signal, true);
    if (raw === null) return null;
    const user = userSchema.safeParse(raw);
    if (!user.success) return null;
    const about = hnPlainText(user.data.about);
    const name = user.data.username;
    return this.candidate(
      name,
      {
        kind: 'people_search',
        id: name,
        text: (about || name).slice(0, MAX_TEXT),
        url: hnUserUrl(name),
        date: new Date(this.now()).toISOString(),
      },
      about ? about.slice(0, 300) : null,
    );
  }

  close(): Promise<void> {
    return this.http.close();
  }

  // -------------------------------------------------------------------------------------------

  /** One GET at the pace; a 429's reset pauses every later call of this process. */
  private async call(
    path: string,
    query: URLSearchParams | undefined,
    signal: AbortSignal | undefined,
    notFoundIsNull = false,
  ): Promise<unknown> {
    try {
      await this.pace.take(this.paceKey);
    } catch (err) {
      if (err instanceof PaceExceeded)
        throw new SourceError(this.name, 'rate_limited', err.message, {
          retryAfterSeconds: Math.ceil(err.waitMs / 1000),
          reason: 'pace',
        });
      throw err;
    }
    signal?.throwIfAborted();
    try {
      return await this.http.json('GET', path, { query, signal, notFoundIsNull });
    } catch (err) {
      if (err instanceof SourceError && err.code === 'rate_limited' && err.retryAfterSeconds !== null)
        this.pace.pause(this.paceKey, new Date(this.now() + err.retryAfterSeconds * 1000));
      throw err;
    }
  }

  /** A hit as a candidate when its own text mentions keyword `k` and none before it; else null. */
  private fromHit(hit: Hit, steps: readonly (readonly string[])[], k: number): Candidate | null {
    if (!hit.author) return null;
    const comment = hit._tags.includes('comment');
    if (!comment && !hit._tags.includes('story')) return null;
    const text = comment
      ? hnPlainText(hit.comment_text)
      : [hit.title?.trim() ?? '', hnPlainText(hit.story_text)].filter(Boolean).join('\n\n');
    const padded = ` ${tokenize(text).join(' ')} `;
    if (!mentions(padded, steps[k]) || steps.slice(0, k).some((w) => mentions(padded, w))) return null;
    const seconds = hit.created_at_i ?? (hit.created_at ? Math.floor(Date.parse(hit.created_at) / 1000) : null);
    if (seconds === null) return null;
    return this.candidate(hit.author, {
      kind: 'post_keywords',
      id: hit.objectID,
      text: text.slice(0, MAX_TEXT),
      // A comment's place is its item page; a story's is what it links to (a text post: its page).
      url: comment ? hnItemUrl(hit.objectID) : (hit.url ?? hnItemUrl(hit.objectID)),
      date: new Date(seconds * 1000).toISOString(),
    });
  }

  private candidate(username: string, evidence: Evidence, headline: string | null = null): Candidate {
    return {
      source: this.name,
      externalId: username,
      profileUrl: null,
      fullName: username,
      firstName: null,
      lastName: null,
      title: null,
      headline,
      seniority: null,
      company: null,
      country: null,
      email: null,
      currentEmployer: null,
      evidence,
      signalKey: signalKey(evidence.kind, { source: this.name, evidenceId: evidence.id, personId: username }),
    };
  }

  private decodeCursor(cursor: string, fingerprint: string, steps: number): CursorState {
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    } catch {
      parsed = null;
    }
    const r = cursorSchema.safeParse(parsed);
    if (!r.success || r.data.f !== fingerprint || r.data.k >= steps)
      throw new SourceError(this.name, 'invalid_request', 'cursor does not belong to this query');
    return r.data;
  }
}

/** The username of a Hacker News user page (`news.ycombinator.com/user?id=pg`, any scheme, www or not); else null. */
export function usernameOf(url: string): string | null {
  let u: URL;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:/i.test(url.trim()) ? url.trim() : `https://${url.trim()}`);
  } catch {
    return null;
  }
  if (u.hostname.replace(/^www\./, '').toLowerCase() !== 'news.ycombinator.com') return null;
  if (u.pathname.replace(/\/$/, '') !== '/user') return null;
  const id = u.searchParams.get('id');
  // HN usernames: 2–15 letters, digits, dashes and underscores.
  return id && /^[A-Za-z0-9_-]{2,15}$/.test(id) ? id : null;
}
