// A local stand-in for the Hacker News Search API (HN Search by Algolia, hn.algolia.com/api): what
// the tests point HN_SEARCH_BASE_URL at (`<url>/api/v1`). It speaks the documented format, written
// from the API page's own text and examples:
//
//   GET /api/v1/search          sorted by relevance, then points, then number of comments
//   GET /api/v1/search_by_date  sorted by date, more recent first
//     query=         full-text (every word must match, the last one as a prefix, "…" a phrase),
//                    over title, url, author, story_text, comment_text and a comment's story_title
//     tags=          story, comment, poll, pollopt, show_hn, ask_hn, author_:USERNAME, story_:ID;
//                    ANDed, ORed between parentheses: `author_pg,(story,poll)`
//     numericFilters= created_at_i, points, num_comments with <, <=, =, > or >=; comma-separated (AND)
//     page=, hitsPerPage= (default 20, at most 1000); at most 1,000 hits are reachable by paging
//     → { hits: [{ title, url, author, points, story_text, comment_text, _tags, num_comments,
//         objectID, _highlightResult, created_at, created_at_i, story_id, parent_id, story_title,
//         story_url }], page, nbHits, nbPages, hitsPerPage, processingTimeMS, query, params, … }
//   GET /api/v1/items/:id        the item with its children, nested
//   GET /api/v1/users/:username  { username, about, karma }
//   Errors as Algolia answers them: { message, status } (an unknown parameter, a bad filter: 400).
//
// No key is involved. Tests seed items and users, queue faults (429 with or without Retry-After,
// 5xx) for the next requests, and read every request received.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HnItem {
  id: number;
  type: 'story' | 'comment' | 'poll' | 'pollopt';
  /** Null: a deleted item (still listed by the index, without an author). */
  author: string | null;
  /** Unix seconds. */
  createdAt: number;
  title?: string | null;
  url?: string | null;
  /** HTML, as HN stores it (story_text or comment_text). */
  text?: string | null;
  points?: number | null;
  /** A comment's parent (story or comment) and story. */
  parentId?: number | null;
  storyId?: number | null;
}

export interface HnRequest {
  method: string;
  /** Below /api/v1, e.g. `/search_by_date`. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
}

export interface HnFault {
  status: number;
  /** Sent as Retry-After when given. */
  retryAfter?: string;
  message?: string;
}

export interface HnStandIn {
  /** The base URL to configure: `http://127.0.0.1:<port>/api/v1`. */
  url: string;
  requests: HnRequest[];
  items: Map<number, HnItem>;
  users: Map<string, { about: string | null; karma: number }>;
  add(...items: HnItem[]): void;
  /** The next requests (any route), in order, answer these faults instead. */
  fail(...faults: HnFault[]): void;
  /** Called after each search is answered (a test may add items between pages). */
  afterSearch?: (req: HnRequest) => void;
  close(): Promise<void>;
}

const PARAMS = new Set(['query', 'tags', 'numericFilters', 'page', 'hitsPerPage']);
const NUMERIC = new Set(['created_at_i', 'points', 'num_comments']);
/** Algolia's paginationLimitedTo default: hits beyond are not reachable by paging. */
const PAGINATION_LIMIT = 1000;

const algoliaError = (status: number, message: string) => ({ status, body: { message, status } });
class BadRequest extends Error {}

const words = (s: string | null | undefined) => (s ?? '').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

export async function startHnStandIn(): Promise<HnStandIn> {
  const items = new Map<number, HnItem>();
  const users = new Map<string, { about: string | null; karma: number }>();
  const requests: HnRequest[] = [];
  const faults: HnFault[] = [];
  let standIn: HnStandIn;

  const storyOf = (it: HnItem) => (it.type === 'comment' && it.storyId != null ? items.get(it.storyId) : undefined);
  const childrenOf = (id: number) => [...items.values()].filter((c) => c.parentId === id);
  const numComments = (it: HnItem) =>
    it.type === 'story' || it.type === 'poll'
      ? [...items.values()].filter((c) => c.type === 'comment' && c.storyId === it.id).length
      : null;
  const tagsOf = (it: HnItem) => {
    const tags: string[] = [it.type];
    if (it.author) tags.push(`author_${it.author}`);
    const story = it.type === 'comment' ? it.storyId : it.id;
    if (story != null) tags.push(`story_${story}`);
    if (it.type === 'story' && /^show hn\b/i.test(it.title ?? '')) tags.push('show_hn');
    if (it.type === 'story' && /^ask hn\b/i.test(it.title ?? '')) tags.push('ask_hn');
    return tags;
  };
  /** The searchable attributes of an item, as the index holds them. */
  const attributes = (it: HnItem): Record<string, string | null> => {
    const story = storyOf(it);
    return it.type === 'comment'
      ? {
          author: it.author,
          comment_text: it.text ?? null,
          story_title: story?.title ?? null,
          story_url: story?.url ?? null,
        }
      : { title: it.title ?? null, url: it.url ?? null, author: it.author, story_text: it.text ?? null };
  };

  /** Query terms: phrases in quotes, words; the last bare word matches as a prefix. */
  function terms(query: string): { words: string[]; prefix: boolean }[] {
    const out: { words: string[]; prefix: boolean }[] = [];
    for (const m of query.matchAll(/"([^"]*)"|([^\s"]+)/g)) {
      const w = words(m[1] ?? m[2]);
      if (w.length) out.push({ words: w, prefix: m[2] !== undefined });
    }
    const last = out.at(-1);
    return out.map((t) => ({ ...t, prefix: t.prefix && t === last }));
  }
  const termIn = (t: { words: string[]; prefix: boolean }, text: string | null) => {
    const w = words(text);
    for (let i = 0; i + t.words.length <= w.length; i++) {
      const ok = t.words.every((x, j) =>
        t.prefix && j === t.words.length - 1 ? w[i + j].startsWith(x) : w[i + j] === x,
      );
      if (ok) return true;
    }
    return false;
  };

  /** `a,b,(c,d)`: every group must hold, a group is any of its tags. */
  function tagGroups(raw: string | null): string[][] {
    if (!raw) return [];
    const groups: string[][] = [];
    let rest = raw.trim();
    while (rest) {
      if (rest.startsWith('(')) {
        const end = rest.indexOf(')');
        if (end < 0) throw new BadRequest(`invalid tags syntax: ${raw}`);
        groups.push(
          rest
            .slice(1, end)
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        );
        rest = rest
          .slice(end + 1)
          .replace(/^\s*,/, '')
          .trim();
      } else {
        const end = rest.indexOf(',');
        const tag = (end < 0 ? rest : rest.slice(0, end)).trim();
        if (!tag || tag.includes(')')) throw new BadRequest(`invalid tags syntax: ${raw}`);
        groups.push([tag]);
        rest = end < 0 ? '' : rest.slice(end + 1).trim();
      }
    }
    return groups;
  }

  function numericFilters(raw: string | null): ((it: HnItem) => boolean)[] {
    if (!raw) return [];
    return raw.split(',').map((cond) => {
      const m = /^\s*([a-z_]+)\s*(<=|>=|<|>|=)\s*(-?\d+(?:\.\d+)?)\s*$/.exec(cond);
      if (!m || !NUMERIC.has(m[1])) throw new BadRequest(`invalid numericFilters: ${cond}`);
      const [, attr, op, v] = m;
      const value = Number(v);
      return (it) => {
        const x = attr === 'created_at_i' ? it.createdAt : attr === 'points' ? it.points : numComments(it);
        if (x == null) return false;
        return op === '<'
          ? x < value
          : op === '<='
            ? x <= value
            : op === '>'
              ? x > value
              : op === '>='
                ? x >= value
                : x === value;
      };
    });
  }

  function highlight(value: string | null, ts: { words: string[]; prefix: boolean }[]) {
    const matched = new Set<string>();
    const text = (value ?? '').replace(/[\p{L}\p{N}]+/gu, (w) => {
      const hit = ts.find((t) =>
        t.words.some((x) => (t.prefix ? w.toLowerCase().startsWith(x) : w.toLowerCase() === x)),
      );
      if (!hit) return w;
      for (const x of hit.words) if (w.toLowerCase().startsWith(x)) matched.add(x);
      return `<em>${w}</em>`;
    });
    const all = ts.flatMap((t) => t.words);
    return {
      value: text,
      matchLevel: matched.size === 0 ? 'none' : all.every((x) => matched.has(x)) ? 'full' : 'partial',
      matchedWords: [...matched],
    };
  }

  function hitOf(it: HnItem, ts: { words: string[]; prefix: boolean }[]) {
    const story = storyOf(it);
    const comment = it.type === 'comment';
    const attrs = attributes(it);
    return {
      created_at: new Date(it.createdAt * 1000).toISOString(),
      title: comment ? null : (it.title ?? null),
      url: comment ? null : (it.url ?? null),
      author: it.author,
      points: comment ? null : (it.points ?? 0),
      story_text: comment ? null : (it.text ?? null),
      comment_text: comment ? (it.text ?? null) : null,
      num_comments: numComments(it),
      story_id: comment ? (it.storyId ?? null) : it.id,
      story_title: comment ? (story?.title ?? null) : null,
      story_url: comment ? (story?.url ?? null) : null,
      parent_id: comment ? (it.parentId ?? null) : null,
      created_at_i: it.createdAt,
      _tags: tagsOf(it),
      objectID: String(it.id),
      _highlightResult: Object.fromEntries(
        Object.entries(attrs)
          .filter(([, v]) => v !== null)
          .map(([k, v]) => [k, highlight(v, ts)]),
      ),
    };
  }

  function search(byDate: boolean, q: URLSearchParams) {
    for (const name of q.keys()) if (!PARAMS.has(name)) throw new BadRequest(`Unknown parameter: ${name}`);
    const int = (name: string, fallback: number, min: number, max: number) => {
      const raw = q.get(name);
      if (raw === null) return fallback;
      const n = Number(raw);
      if (!Number.isInteger(n) || n < min || n > max) throw new BadRequest(`Parameter ${name} is not valid: ${raw}`);
      return n;
    };
    const page = int('page', 0, 0, 1_000_000);
    const hitsPerPage = int('hitsPerPage', 20, 0, 1000);
    const query = q.get('query') ?? '';
    const ts = terms(query);
    const groups = tagGroups(q.get('tags'));
    const numeric = numericFilters(q.get('numericFilters'));
    const found = [...items.values()].filter((it) => {
      const tags = tagsOf(it);
      if (!groups.every((g) => g.some((t) => tags.includes(t)))) return false;
      if (!numeric.every((f) => f(it))) return false;
      const attrs = Object.values(attributes(it));
      return ts.every((t) => attrs.some((a) => termIn(t, a)));
    });
    found.sort((a, b) =>
      byDate
        ? b.createdAt - a.createdAt || b.id - a.id
        : (b.points ?? 0) - (a.points ?? 0) || (numComments(b) ?? 0) - (numComments(a) ?? 0) || b.id - a.id,
    );
    const reachable = Math.min(found.length, PAGINATION_LIMIT);
    const nbPages = hitsPerPage === 0 ? 0 : Math.ceil(reachable / hitsPerPage);
    const from = page * hitsPerPage;
    return {
      hits: found.slice(from, Math.min(from + hitsPerPage, reachable)).map((it) => hitOf(it, ts)),
      nbHits: found.length,
      page,
      nbPages,
      hitsPerPage,
      exhaustiveNbHits: true,
      exhaustiveTypo: true,
      exhaustive: { nbHits: true, typo: true },
      query,
      params: q.toString(),
      processingTimeMS: 1,
    };
  }

  function itemTree(it: HnItem): Record<string, unknown> {
    return {
      id: it.id,
      created_at: new Date(it.createdAt * 1000).toISOString(),
      created_at_i: it.createdAt,
      type: it.type,
      author: it.author,
      title: it.title ?? null,
      url: it.url ?? null,
      text: it.text ?? null,
      points: it.type === 'comment' ? null : (it.points ?? 0),
      parent_id: it.parentId ?? null,
      story_id: it.type === 'comment' ? (it.storyId ?? null) : it.id,
      children: childrenOf(it.id).map(itemTree),
    };
  }

  function answer(req: HnRequest): { status: number; body: unknown; headers?: Record<string, string> } {
    const fault = faults.shift();
    if (fault)
      return {
        ...algoliaError(fault.status, fault.message ?? (fault.status === 429 ? 'Too many requests' : 'Internal error')),
        ...(fault.retryAfter ? { headers: { 'retry-after': fault.retryAfter } } : {}),
      };
    if (req.method !== 'GET') return algoliaError(405, 'Method not allowed');
    try {
      if (req.path === '/search' || req.path === '/search_by_date')
        return { status: 200, body: search(req.path === '/search_by_date', req.query) };
    } catch (err) {
      if (err instanceof BadRequest) return algoliaError(400, err.message);
      throw err;
    }
    const item = /^\/items\/(\d+)$/.exec(req.path);
    if (item) {
      const it = items.get(Number(item[1]));
      return it ? { status: 200, body: itemTree(it) } : algoliaError(404, 'ObjectID does not exist');
    }
    const user = /^\/users\/([^/]+)$/.exec(req.path);
    if (user) {
      const name = decodeURIComponent(user[1]);
      const u = users.get(name);
      return u
        ? { status: 200, body: { username: name, about: u.about, karma: u.karma } }
        : algoliaError(404, 'Not Found');
    }
    return algoliaError(404, 'Not Found');
  }

  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const request: HnRequest = {
        method: req.method ?? 'GET',
        path: url.pathname.replace(/^\/api\/v1/, ''),
        query: url.searchParams,
        headers: req.headers,
      };
      requests.push(request);
      let reply: { status: number; body: unknown; headers?: Record<string, string> };
      if (!url.pathname.startsWith('/api/v1/')) reply = algoliaError(404, 'Not Found');
      else {
        try {
          reply = answer(request);
        } catch (err) {
          reply = algoliaError(500, String(err));
        }
      }
      res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', ...reply.headers });
      res.end(JSON.stringify(reply.body));
      if (reply.status === 200 && (request.path === '/search' || request.path === '/search_by_date'))
        standIn.afterSearch?.(request);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  standIn = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`,
    requests,
    items,
    users,
    add: (...xs) => {
      for (const x of xs) items.set(x.id, x);
    },
    fail: (...xs) => void faults.push(...xs),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return standIn;
}

/** The search requests received (below /api/v1), in order. */
export const searches = (s: HnStandIn, from = 0) =>
  s.requests.slice(from).filter((r) => r.path === '/search' || r.path === '/search_by_date');
