// The partner CRM over HTTP, wire format v1 (docs/integrations.md "Partner wire format"):
// - OAuth 2 authorization code with PKCE (S256) and a confidential client: the browser opens
//   PARTNER_AUTHORIZE_URL; the code is exchanged at PARTNER_TOKEN_URL (form body, HTTP Basic client
//   authentication) for `{ access_token, refresh_token?, expires_in? }`.
// - `GET v1/account` → `{ id, name? }` with `Authorization: Bearer <access token>`.
// - `POST v1/records/upsert` with `{ records: [{ type, external_id, fields, resolution? }] }` (at most
//   100) → `{ results: [{ external_id, status, id?, conflicts?, duplicate? }] }`, one per record in order.
//   `resolution` is `{ mode: "overwrite" }`, `{ mode: "link", id }` or `{ mode: "create" }`. The
//   request carries `Idempotency-Key`: the SHA-256 of its body.
// Transport and status errors map like every provider's (lib/provider-http.ts).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  JsonHttpClient,
  parseWire,
  ProviderError,
  type ProviderErrorCode,
  type ProviderErrorDetails,
} from '../provider-http.js';
import {
  PARTNER_RECORD_KINDS,
  PartnerError,
  type PartnerAccount,
  type PartnerAdapter,
  type PartnerRecord,
  type PartnerResult,
  type PartnerTokens,
} from './types.js';

export interface HttpPartnerOptions {
  baseUrl: string;
  authorizeUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string | null;
  timeoutMs?: number;
}

const value = z.union([z.string().max(20_000), z.number(), z.boolean(), z.null()]);
const wireTokens = z.object({
  access_token: z.string().min(1).max(4000),
  refresh_token: z.string().min(1).max(4000).nullish(),
  expires_in: z
    .number()
    .int()
    .positive()
    .max(10 * 365 * 86400)
    .nullish(),
});
const wireAccount = z.object({ id: z.string().trim().min(1).max(200), name: z.string().max(300).nullish() });
const wireResult = z.discriminatedUnion('status', [
  z.object({ external_id: z.string(), status: z.enum(['upserted', 'unchanged']), id: z.string().min(1).max(200) }),
  z.object({
    external_id: z.string(),
    status: z.literal('conflict'),
    id: z.string().min(1).max(200),
    conflicts: z
      .array(z.object({ field: z.string().min(1).max(100), ours: value, theirs: value }))
      .min(1)
      .max(50),
  }),
  z.object({
    external_id: z.string(),
    status: z.literal('duplicate'),
    duplicate: z.object({
      id: z.string().min(1).max(200),
      match: z.string().max(50),
      fields: z.record(z.string().max(100), value).optional(),
    }),
  }),
]);
const wireResults = z.object({ results: z.array(wireResult).max(100) });
export const wireUpsertRequest = z.object({
  records: z
    .array(
      z.object({
        type: z.enum(PARTNER_RECORD_KINDS),
        external_id: z.string(),
        fields: z.record(z.string(), value),
        resolution: z
          .discriminatedUnion('mode', [
            z.object({ mode: z.literal('overwrite') }),
            z.object({ mode: z.literal('link'), id: z.string() }),
            z.object({ mode: z.literal('create') }),
          ])
          .optional(),
      }),
    )
    .max(100),
});

export class HttpPartner implements PartnerAdapter {
  readonly local = false;
  private readonly http: JsonHttpClient;

  constructor(private readonly opts: HttpPartnerOptions) {
    const error = (code: ProviderErrorCode, message: string, details?: ProviderErrorDetails) =>
      new PartnerError(code, message, details);
    this.http = new JsonHttpClient('partner', { baseUrl: opts.baseUrl, apiKey: '', timeoutMs: opts.timeoutMs }, error);
  }

  authorizationUrl(input: { state: string; redirectUri: string; codeChallenge: string }): string {
    const url = new URL(this.opts.authorizeUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', this.opts.clientId);
    url.searchParams.set('redirect_uri', input.redirectUri);
    url.searchParams.set('state', input.state);
    if (this.opts.scope) url.searchParams.set('scope', this.opts.scope);
    url.searchParams.set('code_challenge', input.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
    return url.toString();
  }

  exchangeCode(input: { code: string; redirectUri: string; codeVerifier: string }): Promise<PartnerTokens> {
    return this.token(
      new URLSearchParams({
        grant_type: 'authorization_code',
        code: input.code,
        redirect_uri: input.redirectUri,
        code_verifier: input.codeVerifier,
      }),
    );
  }

  refresh(refreshToken: string): Promise<PartnerTokens> {
    return this.token(new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }));
  }

  async account(accessToken: string): Promise<PartnerAccount> {
    const a = parseWire(
      this.http,
      wireAccount,
      await this.http.json('GET', 'v1/account', { headers: { authorization: `Bearer ${accessToken}` } }),
    );
    return { accountId: a.id, name: a.name?.trim() || null };
  }

  async upsert(accessToken: string, records: PartnerRecord[]): Promise<PartnerResult[]> {
    if (!records.length) return [];
    const body = {
      records: records.map((r) => ({
        type: r.kind,
        external_id: r.externalId,
        fields: r.fields,
        ...(r.resolve
          ? {
              resolution:
                r.resolve.mode === 'link' ? { mode: 'link', id: r.resolve.partnerId } : { mode: r.resolve.mode },
            }
          : {}),
      })),
    };
    const key = createHash('sha256').update(JSON.stringify(body)).digest('hex');
    const raw = await this.http.json('POST', 'v1/records/upsert', {
      body,
      headers: { authorization: `Bearer ${accessToken}`, 'idempotency-key': key },
    });
    const { results } = parseWire(this.http, wireResults, raw);
    if (results.length !== records.length || results.some((r, i) => r.external_id !== records[i].externalId)) {
      throw this.http.fail('bad_response', 'the results do not answer the records one by one');
    }
    return results.map((r): PartnerResult => {
      if (r.status === 'duplicate')
        return {
          externalId: r.external_id,
          status: 'duplicate',
          candidate: { partnerId: r.duplicate.id, match: r.duplicate.match, fields: r.duplicate.fields ?? {} },
        };
      if (r.status === 'conflict')
        return { externalId: r.external_id, status: 'conflict', partnerId: r.id, conflicts: r.conflicts };
      return { externalId: r.external_id, status: r.status, partnerId: r.id };
    });
  }

  /** RFC 6749 token request: a refused grant (400 invalid_grant) is an `auth` failure like a refused client. */
  private async token(form: URLSearchParams): Promise<PartnerTokens> {
    form.set('client_id', this.opts.clientId);
    const basic = Buffer.from(
      `${encodeURIComponent(this.opts.clientId)}:${encodeURIComponent(this.opts.clientSecret)}`,
    ).toString('base64');
    let raw: unknown;
    try {
      raw = await this.http.json('POST', this.opts.tokenUrl, { form, headers: { authorization: `Basic ${basic}` } });
    } catch (err) {
      if (err instanceof ProviderError && err.code === 'invalid_request')
        throw new PartnerError('auth', 'the authorization grant was refused', err.details);
      throw err;
    }
    const t = parseWire(this.http, wireTokens, raw);
    return {
      accessToken: t.access_token,
      refreshToken: t.refresh_token ?? null,
      expiresAt: t.expires_in ? new Date(Date.now() + t.expires_in * 1000) : null,
    };
  }

  async close(): Promise<void> {
    await this.http.close();
  }
}
