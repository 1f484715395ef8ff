// A local stand-in for Hunter's API v2 (https://hunter.io/api-documentation/v2; docs/enrichment.md
// "Providers"): what the tests point HUNTER_BASE_URL at (`<url>/v2`). It speaks the documented format,
// its answers shaped like the docs' own examples (Alexis Ohanian at reddit.com for the Email
// Finder, intercom.com for the Domain Search, the /account body):
//
//   the key as `api_key`, `X-API-KEY` or `Authorization: Bearer` (each documented); missing or
//   unknown → 401 `{ errors: [{ id: "authentication_failed", code: 401, details }] }`
//   GET /v2/email-finder   domain | company | linkedin_handle, first_name + last_name | full_name,
//                          max_duration (3–20) → `{ data: {…, email: null when not found}, meta: { params } }`;
//                          400 wrong_params / invalid_domain / invalid_max_duration, 451 claimed_email
//   GET /v2/domain-search  domain | company, limit (default 10, ≤ 100; Free plan: limit + offset ≤ 10),
//                          offset, type → `{ data: { domain, organization, pattern, emails: […] }, meta: { results, limit, offset, params } }`;
//                          400 wrong_params / invalid_type / pagination_error
//   GET /v2/account        free; the usage counters below
//
// Usage is counted as /account reports it: a search is counted (and a credit used) when it gives
// something — an Email Finder call that found an email, a Domain Search that returned at least one
// address; once `searches.used` reaches `searches.available` every search answers 429 "usage limit".
// The documented rate, 15 requests per second and 500 per minute per key, is enforced on both
// search endpoints over sliding windows: past it, 403 "You have reached the rate limit".
// Tests add people and domains, queue faults, and read the requests received.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HunterSource {
  domain: string;
  uri: string;
  extracted_on: string;
  last_seen_on: string;
  still_on_page: boolean;
}

export interface HunterPerson {
  first_name: string;
  last_name: string;
  email: string;
  /** The company's domain (the email's, usually). */
  domain: string;
  company: string;
  score?: number;
  position?: string | null;
  seniority?: string | null;
  department?: string | null;
  /** Email Finder's `linkedin_url`; the Domain Search gives the same as `linkedin`. */
  linkedin_url?: string | null;
  twitter?: string | null;
  phone_number?: string | null;
  type?: 'personal' | 'generic';
  verification?: { date: string | null; status: string | null };
  sources?: HunterSource[];
  /** Its owner asked Hunter to stop processing it: the Email Finder answers 451 claimed_email. */
  claimed?: boolean;
}

export interface HunterDomain {
  domain: string;
  organization: string | null;
  pattern: string | null;
  webmail?: boolean;
  disposable?: boolean;
  accept_all?: boolean;
  /** No MX record (or its owner opted out): the Email Finder answers 400 invalid_domain. */
  invalid?: boolean;
}

export interface HunterRequest {
  method: string;
  /** Below `/v2`, e.g. `/email-finder`. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** How the key came (null: none). */
  keyVia: 'api_key' | 'x-api-key' | 'bearer' | null;
  key: string | null;
  status: number;
  at: number;
}

export interface Fault {
  status: number;
  id?: string;
  details?: string;
  headers?: Record<string, string>;
  /** A body of its own instead of Hunter's error body (a malformed answer, say). */
  body?: unknown;
  /** Only requests to this path (below /v2); default any search. */
  path?: string;
  /** How many requests it answers (default 1). */
  times?: number;
}

export interface Usage {
  plan_name: string;
  plan_level: number;
  reset_date: string;
  searches: { used: number; available: number };
  verifications: { used: number; available: number };
  credits: { used: number; available: number };
}

export interface HunterStandIn {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** HUNTER_BASE_URL: `<url>/v2`. */
  baseUrl: string;
  apiKey: string;
  requests: HunterRequest[];
  usage: Usage;
  addPerson(p: HunterPerson): void;
  addDomain(d: HunterDomain): void;
  /** The next matching requests (after the key check) answer this refusal (or body) instead. */
  fail(fault: Fault): void;
  /** Every search from now on is over the usage limit. */
  exhaustQuota(): void;
  /** The key is revoked on Hunter's dashboard: 401 from then on. */
  revokeKey(): void;
  /** Searches so far (the requests to the two search endpoints). */
  searches(): HunterRequest[];
  close(): Promise<void>;
}

/** Hunter's error body: `{ errors: [{ id, code, details }] }`. */
export const hunterError = (status: number, id: string, details: string) => ({
  status,
  body: { errors: [{ id, code: status, details }] },
});

/** The docs' Email Finder example: GET /v2/email-finder?domain=reddit.com&first_name=Alexis&last_name=Ohanian. */
export const ALEXIS: HunterPerson = {
  first_name: 'Alexis',
  last_name: 'Ohanian',
  email: 'alexis@reddit.com',
  score: 97,
  domain: 'reddit.com',
  company: 'Reddit',
  position: 'Cofounder',
  seniority: 'executive',
  department: 'executive',
  twitter: null,
  linkedin_url: null,
  phone_number: null,
  sources: [
    {
      domain: 'redditblog.com',
      uri: 'http://redditblog.com/2008/10/22/widgets-get-an-upgrade-and-a-firefox-extension-that-will-rock-your-world',
      extracted_on: '2018-10-19',
      last_seen_on: '2021-05-18',
      still_on_page: true,
    },
  ],
  verification: { date: '2021-06-14', status: 'valid' },
};

/** The docs' Domain Search example: GET /v2/domain-search?domain=intercom.com. */
export const CIARAN: HunterPerson = {
  first_name: 'Ciaran',
  last_name: 'Lee',
  email: 'ciaran@intercom.com',
  score: 92,
  domain: 'intercom.com',
  company: 'Intercom',
  position: 'Support Engineer',
  seniority: 'senior',
  department: 'it',
  linkedin_url: null,
  twitter: 'ciaran_lee',
  phone_number: null,
  sources: [
    {
      domain: 'github.com',
      uri: 'http://github.com/ciaranlee',
      extracted_on: '2015-07-29',
      last_seen_on: '2017-07-01',
      still_on_page: true,
    },
  ],
  verification: { date: '2019-12-06', status: 'valid' },
};

const DOCS_DOMAINS: HunterDomain[] = [
  { domain: 'reddit.com', organization: 'Reddit', pattern: '{first}', accept_all: false },
  { domain: 'intercom.com', organization: 'Intercom', pattern: '{first}', accept_all: true },
  { domain: 'gmail.com', organization: 'Gmail', pattern: null, webmail: true },
];

const HOST = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(?:\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/;
const SEARCH_PATHS = new Set(['/email-finder', '/domain-search']);
const RATE = { perSecond: 15, perMinute: 500 };

export interface StandInOptions {
  apiKey?: string;
  /** The plan: Free (25 searches, limit + offset ≤ 10 on the Domain Search) unless given. */
  plan?: { name: string; level: number; searches: number };
  /** With the docs' examples (Alexis at reddit.com, Ciaran at intercom.com): default true. */
  examples?: boolean;
}

export async function startHunterStandIn(opts: StandInOptions = {}): Promise<HunterStandIn> {
  const apiKey = opts.apiKey ?? 'hunter-standin-key-0123456789abcdef01234567';
  let revoked = false;
  const plan = opts.plan ?? { name: 'Free', level: 0, searches: 25 };
  const people: HunterPerson[] = [];
  const domains = new Map<string, HunterDomain>();
  const faults: Fault[] = [];
  const requests: HunterRequest[] = [];
  const usage: Usage = {
    plan_name: plan.name,
    plan_level: plan.level,
    reset_date: '2026-12-01',
    searches: { used: 0, available: plan.searches },
    verifications: { used: 0, available: plan.searches * 2 },
    credits: { used: 0, available: plan.searches },
  };
  /** Arrival times of the searches each key made (accepted ones), for the rate limit. */
  const arrivals: number[] = [];
  if (opts.examples ?? true) {
    for (const d of DOCS_DOMAINS) domains.set(d.domain, d);
    people.push(ALEXIS, CIARAN);
  }

  const lower = (s: string | null) => (s ?? '').trim().toLowerCase();
  const domainOf = (p: URLSearchParams): HunterDomain | null => {
    const d = lower(p.get('domain')).replace(/^www\./, '');
    if (d) return domains.get(d) ?? { domain: d, organization: null, pattern: null };
    const company = lower(p.get('company'));
    return [...domains.values()].find((x) => lower(x.organization) === company) ?? null;
  };
  const count = () => {
    usage.searches.used++;
    usage.credits.used++;
  };

  function emailFinder(q: URLSearchParams) {
    const handle = q.get('linkedin_handle')?.trim() || null;
    if (!q.get('domain')?.trim() && !q.get('company')?.trim() && !handle)
      return hunterError(400, 'wrong_params', 'You are missing the domain, company or linkedin_handle parameter');
    let first = q.get('first_name')?.trim() || null;
    let last = q.get('last_name')?.trim() || null;
    const full = q.get('full_name')?.trim() || null;
    if (!handle && !(first && last) && !full)
      return hunterError(400, 'wrong_params', 'You are missing the first_name and last_name, or full_name parameter');
    const maxDuration = q.get('max_duration');
    if (maxDuration !== null && !(Number.isInteger(Number(maxDuration)) && +maxDuration >= 3 && +maxDuration <= 20))
      return hunterError(400, 'invalid_max_duration', 'The max_duration must be an integer between 3 and 20');
    const domainParam = lower(q.get('domain'));
    if (domainParam && !HOST.test(domainParam.replace(/^www\./, '')))
      return hunterError(
        400,
        'invalid_domain',
        'The domain is invalid, has no MX record or its owner asked us to stop',
      );
    const d = q.get('domain') || q.get('company') ? domainOf(q) : null;
    if (d?.invalid)
      return hunterError(
        400,
        'invalid_domain',
        'The domain is invalid, has no MX record or its owner asked us to stop',
      );
    if (!(first && last) && full) {
      const parts = full.split(/\s+/);
      first = parts[0];
      last = parts.slice(1).join(' ') || null;
    }
    const person = people.find((p) =>
      handle
        ? lower(p.linkedin_url ?? '')
            .replace(/\/+$/, '')
            .endsWith(`/in/${lower(handle)}`)
        : d !== null &&
          p.domain === d.domain &&
          lower(p.first_name) === lower(first) &&
          lower(p.last_name) === lower(last),
    );
    if (person?.claimed)
      return hunterError(451, 'claimed_email', 'The owner of this email address asked us to stop processing it');
    const params = {
      first_name: q.get('first_name'),
      last_name: q.get('last_name'),
      full_name: full,
      domain: q.get('domain'),
      company: q.get('company'),
      max_duration: maxDuration,
      ...(handle ? { linkedin_handle: handle } : {}),
    };
    if (!person)
      return {
        status: 200,
        body: {
          data: {
            first_name: first,
            last_name: last,
            email: null,
            score: null,
            domain: d?.domain ?? null,
            accept_all: d?.accept_all ?? false,
            position: null,
            twitter: null,
            linkedin_url: null,
            phone_number: null,
            company: d?.organization ?? null,
            sources: [],
            verification: { date: null, status: null },
          },
          meta: { params },
        },
      };
    count();
    const pd = domains.get(person.domain);
    return {
      status: 200,
      body: {
        data: {
          first_name: person.first_name,
          last_name: person.last_name,
          email: person.email,
          score: person.score ?? 90,
          domain: person.domain,
          accept_all: pd?.accept_all ?? false,
          position: person.position ?? null,
          twitter: person.twitter ?? null,
          linkedin_url: person.linkedin_url ?? null,
          phone_number: person.phone_number ?? null,
          company: person.company,
          sources: person.sources ?? [],
          verification: person.verification ?? { date: '2026-01-05', status: 'valid' },
        },
        meta: { params },
      },
    };
  }

  function domainSearch(q: URLSearchParams) {
    if (!q.get('domain')?.trim() && !q.get('company')?.trim())
      return hunterError(400, 'wrong_params', 'You are missing the domain or company parameter');
    const type = q.get('type');
    if (type !== null && type !== 'personal' && type !== 'generic')
      return hunterError(400, 'invalid_type', 'The type must be personal or generic');
    const limit = q.get('limit') === null ? 10 : Number(q.get('limit'));
    const offset = q.get('offset') === null ? 0 : Number(q.get('offset'));
    if (!Number.isInteger(limit) || limit < 1 || limit > 100 || !Number.isInteger(offset) || offset < 0)
      return hunterError(400, 'pagination_error', 'The limit or offset parameter is invalid');
    if (plan.level === 0 && limit + offset > 10)
      return hunterError(400, 'pagination_error', 'On the Free plan, limit + offset cannot be above 10');
    const d = domainOf(q);
    const all = d
      ? people.filter((p) => p.domain === d.domain && !p.claimed && (!type || (p.type ?? 'personal') === type))
      : [];
    const page = all.slice(offset, offset + limit);
    if (page.length) count();
    return {
      status: 200,
      body: {
        data: {
          domain: d?.domain ?? null,
          disposable: d?.disposable ?? false,
          webmail: d?.webmail ?? false,
          accept_all: d?.accept_all ?? false,
          pattern: d?.pattern ?? null,
          organization: d?.organization ?? null,
          linked_domains: [],
          emails: page.map((p) => ({
            value: p.email,
            type: p.type ?? 'personal',
            confidence: p.score ?? 90,
            sources: p.sources ?? [],
            first_name: p.first_name,
            last_name: p.last_name,
            position: p.position ?? null,
            position_raw: p.position ?? null,
            seniority: p.seniority ?? null,
            department: p.department ?? null,
            linkedin: p.linkedin_url ?? null,
            twitter: p.twitter ?? null,
            phone_number: p.phone_number ?? null,
            verification: p.verification ?? { date: '2026-01-05', status: 'valid' },
          })),
        },
        meta: {
          results: all.length,
          limit,
          offset,
          params: {
            domain: q.get('domain'),
            company: q.get('company'),
            type,
            seniority: q.get('seniority'),
            department: q.get('department'),
          },
        },
      },
    };
  }

  const account = () => ({
    status: 200,
    body: {
      data: {
        first_name: 'Antoine',
        last_name: 'Finkelstein',
        email: 'antoine@hunter.io',
        plan_name: usage.plan_name,
        plan_level: usage.plan_level,
        reset_date: usage.reset_date,
        team_id: 1,
        requests: { credits: usage.credits, searches: usage.searches, verifications: usage.verifications },
        calls: {
          used: usage.searches.used + usage.verifications.used,
          available: usage.searches.available + usage.verifications.available,
        },
      },
    },
  });

  function answer(req: IncomingMessage, url: URL, path: string, key: string | null) {
    if (!key || key !== apiKey || revoked)
      return hunterError(401, 'authentication_failed', 'No user found for the API key supplied');
    const search = SEARCH_PATHS.has(path);
    const fault = faults.find((f) => (f.path ? f.path === path : search));
    if (fault) {
      if (--fault.times! <= 0) faults.splice(faults.indexOf(fault), 1);
      const refusal = hunterError(fault.status, fault.id ?? `http_${fault.status}`, fault.details ?? '');
      return { status: fault.status, body: 'body' in fault ? fault.body : refusal.body, headers: fault.headers };
    }
    if (req.method !== 'GET' || !['/email-finder', '/domain-search', '/account'].includes(path))
      return hunterError(404, 'not_found', 'The requested resource does not exist');
    if (path === '/account') return account();
    const now = Date.now();
    while (arrivals.length && arrivals[0] <= now - 60_000) arrivals.shift();
    const lastSecond = arrivals.filter((t) => t > now - 1000).length;
    if (lastSecond >= RATE.perSecond || arrivals.length >= RATE.perMinute)
      return hunterError(403, 'too_many_requests', 'You have reached the rate limit. Please slow down your requests.');
    arrivals.push(now);
    if (usage.searches.used >= usage.searches.available)
      return hunterError(
        429,
        'too_many_requests',
        'You have reached your usage limit for this month. Upgrade your plan if necessary.',
      );
    return path === '/email-finder' ? emailFinder(url.searchParams) : domainSearch(url.searchParams);
  }

  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const path = url.pathname.replace(/^\/v2(?=\/)/, '');
      const bearer = /^Bearer\s+(\S+)$/i.exec(String(req.headers.authorization ?? ''))?.[1] ?? null;
      const header = typeof req.headers['x-api-key'] === 'string' ? req.headers['x-api-key'] : null;
      const query = url.searchParams.get('api_key');
      const [keyVia, key]: [HunterRequest['keyVia'], string | null] = query
        ? ['api_key', query]
        : header
          ? ['x-api-key', header]
          : bearer
            ? ['bearer', bearer]
            : [null, null];
      const reply: { status: number; body: unknown; headers?: Record<string, string> } = url.pathname.startsWith('/v2/')
        ? answer(req, url, path, key)
        : hunterError(404, 'not_found', 'The requested resource does not exist');
      const params = new URLSearchParams(url.searchParams);
      params.delete('api_key'); // never kept in the record
      requests.push({
        method: req.method ?? 'GET',
        path,
        query: params,
        headers: req.headers,
        keyVia,
        key,
        status: reply.status,
        at: Date.now(),
      });
      res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', ...reply.headers });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    baseUrl: `${url}/v2`,
    apiKey,
    requests,
    usage,
    addPerson: (p) => void people.push(p),
    addDomain: (d) => void domains.set(d.domain, d),
    fail: (f) => void faults.push({ ...f, times: f.times ?? 1 }),
    exhaustQuota: () => void (usage.searches.used = usage.searches.available),
    revokeKey: () => void (revoked = true),
    searches: () => requests.filter((r) => SEARCH_PATHS.has(r.path)),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
