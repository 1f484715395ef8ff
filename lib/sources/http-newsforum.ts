// newsforum over HTTP. Wire format (v1; docs/sources.md has the full description):
//
//   GET {base}/v1/search?q=<keyword>&q=<keyword>…&since=<ISO>&after=<cursor>&limit=<1..200>
//   Authorization: Bearer <NEWSFORUM_API_KEY>
//   → 200 { items: [{ id, kind: 'post'|'comment', parent_id?, author: { id, name, profile_url,
//           network_profile_url?, headline?, title?, company?, country? }, text, url, created_at }],
//           next: string|null }
//
//   GET {base}/v1/users/by-url?url=<profile url>  → 200 { user: author } | 404
import { z } from 'zod';
import type { JsonHttpClient } from '../provider-http.js';
import { parseWire, sourceClient, splitName, type HttpSourceOptions } from './http-client.js';
import {
  checkPage,
  checkQuery,
  signalKey,
  SourceError,
  type Candidate,
  type CandidatePage,
  type DiscoverySource,
  type PageRequest,
  type SignalKind,
  type SignalQuery,
} from './types.js';

const str = z.string().max(10_000);
const optional = <T extends z.ZodType>(t: T) => t.nullish().transform((v) => v ?? null);

const author = z.object({
  id: z.union([z.string().min(1).max(200), z.number().int()]).transform(String),
  name: z.string().min(1).max(300),
  profile_url: optional(str),
  network_profile_url: optional(str),
  headline: optional(str),
  title: optional(str),
  company: optional(str),
  country: optional(
    z
      .string()
      .regex(/^[A-Za-z]{2}$/)
      .transform((c) => c.toUpperCase()),
  ).catch(null),
});

const item = z.object({
  id: z.union([z.string().min(1).max(200), z.number().int()]).transform(String),
  kind: z.enum(['post', 'comment']),
  parent_id: optional(z.union([z.string(), z.number()]).transform(String)),
  author,
  text: z.string().max(100_000),
  url: optional(str),
  created_at: z.iso.datetime({ offset: true }),
});

const searchResponse = z.object({ items: z.array(item).max(1000), next: optional(z.string().min(1).max(2000)) });
const userResponse = z.object({ user: author });

export class HttpNewsforum implements DiscoverySource {
  readonly name = 'newsforum' as const;
  private readonly http: JsonHttpClient;

  constructor(opts: HttpSourceOptions) {
    this.http = sourceClient('newsforum', opts);
  }

  supports(kind: SignalKind): boolean {
    return kind === 'post_keywords';
  }

  async search(raw: SignalQuery, page: PageRequest, signal?: AbortSignal): Promise<CandidatePage> {
    checkPage(this.name, page);
    const query = checkQuery(this.name, raw);
    if (!this.supports(query.kind))
      throw new SourceError(this.name, 'invalid_request', `signal kind ${query.kind} is not served by newsforum`);
    const params = new URLSearchParams();
    for (const k of query.keywords ?? []) params.append('q', k);
    if (query.filters?.since) params.set('since', new Date(query.filters.since).toISOString());
    if (page.cursor) params.set('after', page.cursor);
    params.set('limit', String(page.limit));
    const body = parseWire(
      this.http,
      searchResponse,
      await this.http.json('GET', '/v1/search', { query: params, signal }),
    );
    return {
      candidates: body.items.map((it) =>
        this.candidate(it.author, {
          kind: query.kind,
          id: it.id,
          text: it.text,
          url: it.url,
          date: new Date(it.created_at).toISOString(),
        }),
      ),
      nextCursor: body.next,
    };
  }

  async profile(url: string, signal?: AbortSignal): Promise<Candidate | null> {
    const raw = await this.http.json('GET', '/v1/users/by-url', {
      query: new URLSearchParams({ url }),
      signal,
      notFoundIsNull: true,
    });
    if (raw === null) return null;
    const { user } = parseWire(this.http, userResponse, raw);
    return this.candidate(user, {
      kind: 'people_search',
      id: user.id,
      text: user.headline ?? user.name,
      url: user.profile_url,
      date: new Date().toISOString(),
    });
  }

  private candidate(a: z.infer<typeof author>, evidence: Candidate['evidence']): Candidate {
    return {
      source: this.name,
      externalId: a.id,
      profileUrl: a.network_profile_url ?? a.profile_url,
      fullName: a.name,
      ...splitName(a.name),
      title: a.title,
      headline: a.headline,
      seniority: null,
      company: a.company ? { name: a.company, domain: null, size: null, industry: null } : null,
      country: a.country,
      email: null,
      currentEmployer: null,
      evidence,
      signalKey: signalKey(evidence.kind, { source: this.name, evidenceId: evidence.id, personId: a.id }),
    };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
