// A local stand-in for HubSpot (docs/partner.md lists the documentation it follows): what the tests
// point HUBSPOT_API_BASE_URL and HUBSPOT_AUTHORIZE_URL at. One server speaks
//   - OAuth: `GET /oauth/authorize` (client_id, redirect_uri, scope, state; the installing user
//     consents at once: 302 to the redirect URI with `code` and `state`), `POST /oauth/v1/token`
//     (form: authorization_code / refresh_token with client_id and client_secret → `{ token_type,
//     refresh_token, access_token, expires_in: 1800 }`; refusals 400 `{ status: "BAD_AUTH_CODE" |
//     "BAD_REFRESH_TOKEN" | "BAD_CLIENT_ID" | …, message, correlationId }`), `GET
//     /oauth/v1/access-tokens/{token}` (hub_id, hub_domain, scopes…);
//   - the CRM v3/v4 routes the adapter uses: contacts batch read / upsert (idProperty email) /
//     update / create, companies search / batch create / update, notes batch create (with
//     associations) / update, v4 batch associate default contacts→companies. Batch answers are
//     `{ status: "COMPLETE", results, startedAt, completedAt }` (201 for creates), 207 with
//     `numErrors, errors: [{ status: "error", category, message, context: { objectWriteTraceId: […] } }]`
//     when inputs carry an objectWriteTraceId (multi-status), else one bad input refuses the whole
//     batch (400 VALIDATION_ERROR);
//   - errors `{ status: "error", message, correlationId, category }`: 401 INVALID_AUTHENTICATION /
//     EXPIRED_AUTHENTICATION, 403 MISSING_SCOPES, 429 `{ errorType: "RATE_LIMIT", policyName }` with
//     X-HubSpot-RateLimit-* headers — on demand (`rateLimitNext`) and when a hub goes over its limit
//     (110 requests per rolling 10 s; search 5 per second).
// State lives in memory; tests seed it (contacts, companies), read it, and drive failures.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInObject {
  id: string;
  properties: Record<string, string>;
  createdAt: Date;
  updatedAt: Date;
}

export interface StandInRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  json: any;
  form: URLSearchParams | null;
  status: number;
}

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** A redirect (the authorize page). */
  location?: string;
}

interface Token {
  hubId: number;
  scopes: string[];
  expiresAt: number;
  refreshToken: string;
}

export interface HubSpotStandInOptions {
  clientId?: string;
  clientSecret?: string;
  /** The app's redirect URL (HubSpot requires the authorize request's to equal it). Settable later. */
  redirectUri?: string;
  /** The scopes the app asks for (required ones). */
  scopes?: string[];
  /** The rolling limit of CRM calls per hub (default HubSpot's public-app limit, 110 per 10 s). */
  limit?: { max: number; windowMs: number };
  /** Companies written less than this long ago are not yet found by search (HubSpot's index lags). */
  searchLagMs?: number;
  /** false: a bad input refuses its whole batch even when inputs carry objectWriteTraceIds. */
  multiStatus?: boolean;
}

/** HubSpot's default properties the stand-in accepts per object (anything else is PROPERTY_DOESNT_EXIST). */
const PROPERTIES: Record<'contacts' | 'companies' | 'notes', string[]> = {
  contacts: ['email', 'firstname', 'lastname', 'jobtitle', 'company', 'phone', 'country', 'website', 'lifecyclestage'],
  companies: ['name', 'domain', 'website', 'phone', 'city', 'country', 'industry'],
  notes: ['hs_timestamp', 'hs_note_body', 'hubspot_owner_id', 'hs_attachment_ids'],
};
/** The scope each object's writes need (notes are contact engagements: the contacts scopes). */
const WRITE_SCOPE = {
  contacts: 'crm.objects.contacts.write',
  companies: 'crm.objects.companies.write',
  notes: 'crm.objects.contacts.write',
};
const READ_SCOPE = {
  contacts: 'crm.objects.contacts.read',
  companies: 'crm.objects.companies.read',
  notes: 'crm.objects.contacts.read',
};
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const correlationId = () => randomUUID();

export function hubspotError(status: number, category: string, message: string, extra: object = {}): Reply {
  return { status, body: { status: 'error', message, correlationId: correlationId(), category, ...extra } };
}

export type HubSpotStandIn = Awaited<ReturnType<typeof startHubSpotStandIn>>;

export async function startHubSpotStandIn(opts: HubSpotStandInOptions = {}) {
  const app = {
    id: 4_201_337,
    clientId: opts.clientId ?? randomUUID(),
    clientSecret: opts.clientSecret ?? randomUUID(),
    redirectUri: opts.redirectUri ?? '',
    scopes: opts.scopes ?? [
      'crm.objects.contacts.read',
      'crm.objects.contacts.write',
      'crm.objects.companies.read',
      'crm.objects.companies.write',
    ],
  };
  const hub = { id: 24_601_000 + Math.floor(Math.random() * 1000), domain: 'standin-portal.hubspot.com' };
  const limit = opts.limit ?? { max: 110, windowMs: 10_000 };
  const requests: StandInRequest[] = [];
  const codes = new Map<string, { redirectUri: string; scopes: string[]; at: number }>();
  const tokens = new Map<string, Token>();
  const refreshTokens = new Map<string, { hubId: number; scopes: string[]; revoked: boolean }>();
  const objects = {
    contacts: new Map<string, StandInObject>(),
    companies: new Map<string, StandInObject>(),
    notes: new Map<string, StandInObject>(),
  };
  /** `contactId:companyId` (associationTypeId 279, the unlabeled contact→company type). */
  const contactCompany = new Set<string>();
  /** note id → the contacts it is associated with (type 202). */
  const noteContacts = new Map<string, Set<string>>();
  let nextId = 5_000;
  const calls: number[] = [];
  const searches: number[] = [];
  const state = {
    searchLagMs: opts.searchLagMs ?? 0,
    multiStatus: opts.multiStatus ?? true,
    forced: [] as Reply[],
    deny: false,
  };

  const newObject = (type: keyof typeof objects, properties: Record<string, string>, at = new Date()) => {
    const o: StandInObject = { id: String(nextId++), properties: { ...properties }, createdAt: at, updatedAt: at };
    objects[type].set(o.id, o);
    return o;
  };
  /** An object as the API shows it: its properties with the default read-only ones. */
  const view = (o: StandInObject, only?: string[]) => {
    const all: Record<string, string> = {
      ...o.properties,
      hs_object_id: o.id,
      createdate: o.createdAt.toISOString(),
      lastmodifieddate: o.updatedAt.toISOString(),
    };
    const properties = only
      ? Object.fromEntries([...only, 'hs_object_id', 'createdate', 'lastmodifieddate'].map((k) => [k, all[k] ?? null]))
      : all;
    return {
      id: o.id,
      properties,
      createdAt: o.createdAt.toISOString(),
      updatedAt: o.updatedAt.toISOString(),
      archived: false,
    };
  };
  const contactByEmail = (email: string) =>
    [...objects.contacts.values()].find((c) => c.properties.email?.toLowerCase() === email.toLowerCase());

  /** Why these properties are refused (HubSpot's validation), or null. */
  function invalid(type: keyof typeof objects, properties: unknown): { code: string; message: string } | null {
    if (!properties || typeof properties !== 'object')
      return { code: 'INVALID_INPUT', message: 'properties is required' };
    for (const [k, v] of Object.entries(properties)) {
      if (!PROPERTIES[type].includes(k))
        return { code: 'PROPERTY_DOESNT_EXIST', message: `Property "${k}" does not exist` };
      if (typeof v !== 'string') return { code: 'INVALID_STRING', message: `Property "${k}" must be a string` };
      if (k === 'email' && v && !EMAIL_RE.test(v))
        return { code: 'INVALID_EMAIL', message: `Property values were not valid: Email address ${v} is invalid` };
    }
    return null;
  }

  /**
   * A batch write: `apply` each input (its object, or why it is refused). Multi-status when every
   * input has an objectWriteTraceId: 207 with the errors; else one refusal refuses all (400, nothing written).
   */
  function batch(
    inputs: any[],
    apply: (
      input: any,
      dryRun: boolean,
    ) => { object?: any; error?: { category: string; message: string; context?: object } },
    okStatus = 200,
  ): Reply {
    if (!Array.isArray(inputs) || inputs.length < 1 || inputs.length > 100)
      return hubspotError(400, 'VALIDATION_ERROR', 'inputs must contain between 1 and 100 items');
    const startedAt = new Date().toISOString();
    const traced = state.multiStatus && inputs.every((i) => typeof i?.objectWriteTraceId === 'string');
    if (!traced) {
      const refused = inputs.map((i) => apply(i, true).error).find(Boolean);
      if (refused) return hubspotError(400, refused.category, refused.message);
    }
    const results: any[] = [];
    const errors: any[] = [];
    for (const input of inputs) {
      const r = apply(input, false);
      const trace = input?.objectWriteTraceId;
      if (r.error)
        errors.push({
          status: 'error',
          category: r.error.category,
          message: r.error.message,
          context: { ...(r.error.context ?? {}), ...(trace ? { objectWriteTraceId: [trace] } : {}) },
        });
      else results.push({ ...r.object, ...(trace ? { objectWriteTraceId: trace } : {}) });
    }
    const body = {
      status: 'COMPLETE',
      results,
      ...(errors.length ? { numErrors: errors.length, errors } : {}),
      startedAt,
      completedAt: new Date().toISOString(),
    };
    return { status: errors.length ? 207 : okStatus, body };
  }

  const duplicateIds = (ids: string[]) => ids.filter((id, i) => ids.indexOf(id) !== i);

  // ---------------------------------------------------------------------------------------------
  // The CRM routes (bearer token checked before)

  function crm(method: string, path: string, body: any, token: Token): Reply {
    const needs = (scope: string) =>
      token.scopes.includes(scope)
        ? null
        : hubspotError(
            403,
            'MISSING_SCOPES',
            "This app hasn't been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.",
            {
              errors: [
                {
                  message: 'One or more of the following scopes are required.',
                  context: { requiredGranularScopes: [scope] },
                },
              ],
            },
          );
    let m: RegExpExecArray | null;
    if (method !== 'POST') return hubspotError(405, 'METHOD_NOT_ALLOWED', 'Method not allowed');

    if ((m = /^\/crm\/v3\/objects\/(contacts|companies|notes)\/batch\/(create|update|upsert|read)$/.exec(path))) {
      const type = m[1] as keyof typeof objects;
      const op = m[2];
      const refusal = needs(op === 'read' ? READ_SCOPE[type] : WRITE_SCOPE[type]);
      if (refusal) return refusal;
      const inputs = body?.inputs;
      if (op === 'read') {
        const idProperty = body?.idProperty ?? 'hs_object_id';
        if (!Array.isArray(inputs) || inputs.length < 1 || inputs.length > 100)
          return hubspotError(400, 'VALIDATION_ERROR', 'inputs must contain between 1 and 100 items');
        const ids = inputs.map((i: any) => String(i?.id ?? ''));
        const dups = duplicateIds(ids);
        if (dups.length)
          return hubspotError(400, 'VALIDATION_ERROR', `Duplicate IDs found in batch input: [${dups.join(', ')}]`);
        const find = (id: string) =>
          idProperty === 'email' && type === 'contacts' ? contactByEmail(id) : objects[type].get(id);
        const found = ids.map(find);
        const missing = ids.filter((_, i) => !found[i]);
        const results = found.filter(Boolean).map((o) => view(o!, body?.properties));
        return {
          status: missing.length ? 207 : 200,
          body: {
            status: 'COMPLETE',
            results,
            ...(missing.length
              ? {
                  numErrors: 1,
                  errors: [
                    {
                      status: 'error',
                      category: 'OBJECT_NOT_FOUND',
                      message: `Could not get some ${type.toUpperCase().replace(/S$/, '').replace(/IE$/, 'Y')} objects, they may be deleted or not exist. Check that ids are valid.`,
                      context: { ids: missing },
                    },
                  ],
                }
              : {}),
            startedAt: new Date().toISOString(),
            completedAt: new Date().toISOString(),
          },
        };
      }
      if (op === 'upsert') {
        if (type !== 'contacts') return hubspotError(400, 'VALIDATION_ERROR', 'upsert needs a unique idProperty');
        if (Array.isArray(inputs)) {
          const bad = inputs.find((i: any) => i?.idProperty !== 'email');
          if (bad)
            return hubspotError(
              400,
              'VALIDATION_ERROR',
              `${bad?.idProperty ?? 'idProperty'} is not a unique property of contacts`,
            );
          const dups = duplicateIds(inputs.map((i: any) => String(i?.id ?? '').toLowerCase()));
          if (dups.length)
            return hubspotError(400, 'VALIDATION_ERROR', `Duplicate IDs found in batch input: [${dups.join(', ')}]`);
        }
        return batch(inputs, (input, dryRun) => {
          const email = String(input?.id ?? '');
          const why = invalid(type, { ...input?.properties, email });
          if (why) return { error: { category: 'VALIDATION_ERROR', message: why.message } };
          if (dryRun) return {};
          const existing = contactByEmail(email);
          if (existing) {
            Object.assign(existing.properties, input.properties, { email: email.toLowerCase() });
            existing.updatedAt = new Date();
            return { object: { ...view(existing), new: false } };
          }
          return {
            object: { ...view(newObject('contacts', { ...input.properties, email: email.toLowerCase() })), new: true },
          };
        });
      }
      if (op === 'update') {
        if (Array.isArray(inputs)) {
          const dups = duplicateIds(inputs.map((i: any) => String(i?.id ?? '')));
          if (dups.length)
            return hubspotError(400, 'VALIDATION_ERROR', `Duplicate IDs found in batch input: [${dups.join(', ')}]`);
        }
        return batch(inputs, (input, dryRun) => {
          const o = objects[type].get(String(input?.id ?? ''));
          if (!o)
            return {
              error: {
                category: 'OBJECT_NOT_FOUND',
                message: 'Object not found.  objectId are usually numeric.',
                context: { ids: [String(input?.id)] },
              },
            };
          const why = invalid(type, input?.properties);
          if (why) return { error: { category: 'VALIDATION_ERROR', message: why.message } };
          const email = input.properties.email?.toLowerCase();
          if (type === 'contacts' && email && contactByEmail(email) && contactByEmail(email) !== o)
            return { error: { category: 'CONFLICT', message: `A contact with the email '${email}' already exists.` } };
          if (dryRun) return {};
          Object.assign(o.properties, input.properties, email ? { email } : {});
          o.updatedAt = new Date();
          return { object: view(o) };
        });
      }
      // create
      return batch(
        inputs,
        (input, dryRun) => {
          const why = invalid(type, input?.properties);
          if (why) return { error: { category: 'VALIDATION_ERROR', message: why.message } };
          if (type === 'contacts') {
            const email = input.properties.email?.toLowerCase();
            if (email && contactByEmail(email))
              return {
                error: {
                  category: 'CONFLICT',
                  message: `Contact already exists. Existing ID: ${contactByEmail(email)!.id}`,
                },
              };
          }
          if (type === 'notes' && !input.properties.hs_timestamp)
            return {
              error: {
                category: 'VALIDATION_ERROR',
                message: 'Property values were not valid: hs_timestamp is required',
              },
            };
          const assoc = Array.isArray(input?.associations) ? input.associations : [];
          for (const a of assoc) {
            const typeId = a?.types?.[0]?.associationTypeId;
            if (type !== 'notes' || typeId !== 202 || !objects.contacts.has(String(a?.to?.id)))
              return {
                error: {
                  category: 'VALIDATION_ERROR',
                  message: `Invalid association to ${a?.to?.id} (type ${typeId})`,
                },
              };
          }
          if (dryRun) return {};
          const properties = { ...input.properties };
          if (type === 'contacts' && properties.email) properties.email = properties.email.toLowerCase();
          const o = newObject(type, properties);
          if (type === 'notes') noteContacts.set(o.id, new Set(assoc.map((a: any) => String(a.to.id))));
          return { object: view(o) };
        },
        201,
      );
    }

    if ((m = /^\/crm\/v3\/objects\/(companies|contacts)\/search$/.exec(path))) {
      const type = m[1] as 'companies' | 'contacts';
      const refusal = needs(READ_SCOPE[type]);
      if (refusal) return refusal;
      const groups: any[] = Array.isArray(body?.filterGroups) ? body.filterGroups : [];
      const lagged = Date.now() - state.searchLagMs;
      const matches = (o: StandInObject) =>
        !groups.length ||
        groups.some((g) =>
          (g?.filters ?? []).every((f: any) => {
            const v = (o.properties[f.propertyName] ?? '').toLowerCase();
            if (f.operator === 'EQ') return v === String(f.value ?? '').toLowerCase();
            if (f.operator === 'IN') return (f.values ?? []).some((x: string) => String(x) === v);
            if (f.operator === 'HAS_PROPERTY') return v !== '';
            return false;
          }),
        );
      const hits = [...objects[type].values()]
        .filter((o) => o.updatedAt.getTime() <= lagged && o.createdAt.getTime() <= lagged)
        .filter(matches)
        .sort((a, b) => Number(a.id) - Number(b.id));
      const size = Math.min(Math.max(Number(body?.limit ?? 10), 1), 200);
      const from = Number(body?.after ?? 0);
      const page = hits.slice(from, from + size);
      const defaults =
        type === 'companies' ? ['domain', 'name', 'hs_lastmodifieddate'] : ['email', 'firstname', 'lastname'];
      return {
        status: 200,
        body: {
          total: hits.length,
          results: page.map((o) => view(o, body?.properties ?? defaults)),
          ...(from + size < hits.length ? { paging: { next: { after: String(from + size), link: '' } } } : {}),
        },
      };
    }

    if ((m = /^\/crm\/v4\/associations\/(contacts?)\/(compan(?:y|ies))\/batch\/associate\/default$/.exec(path))) {
      const refusal = needs(WRITE_SCOPE.contacts) ?? needs(WRITE_SCOPE.companies);
      if (refusal) return refusal;
      const inputs = body?.inputs;
      if (!Array.isArray(inputs) || inputs.length < 1 || inputs.length > 2000)
        return hubspotError(400, 'VALIDATION_ERROR', 'inputs must contain between 1 and 2000 items');
      const results: any[] = [];
      const errors: any[] = [];
      for (const i of inputs) {
        const from = String(i?.from?.id);
        const to = String(i?.to?.id);
        if (!objects.contacts.has(from) || !objects.companies.has(to)) {
          errors.push({
            status: 'error',
            category: 'VALIDATION_ERROR',
            message: `No object found for ${objects.contacts.has(from) ? to : from}`,
            context: { fromObjectId: [from], toObjectId: [to] },
          });
          continue;
        }
        contactCompany.add(`${from}:${to}`);
        results.push({
          from: { id: from },
          to: { id: to },
          associationSpec: { associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 279 },
        });
      }
      return {
        status: errors.length ? 207 : 200,
        body: {
          status: 'COMPLETE',
          results,
          ...(errors.length ? { numErrors: errors.length, errors } : {}),
          startedAt: new Date().toISOString(),
          completedAt: new Date().toISOString(),
        },
      };
    }
    return hubspotError(404, 'OBJECT_NOT_FOUND', `No route for ${method} ${path}`);
  }

  // ---------------------------------------------------------------------------------------------
  // OAuth

  function issueTokens(hubId: number, scopes: string[], refreshToken: string) {
    const accessToken = `C${randomBytes(60).toString('base64url')}`;
    tokens.set(accessToken, { hubId, scopes, expiresAt: Date.now() + 1_800_000, refreshToken });
    return { token_type: 'bearer', refresh_token: refreshToken, access_token: accessToken, expires_in: 1800 };
  }

  function oauth(method: string, path: string, query: URLSearchParams, form: URLSearchParams | null): Reply | null {
    if (method === 'GET' && path === '/oauth/authorize') {
      const clientId = query.get('client_id');
      const redirectUri = query.get('redirect_uri') ?? '';
      const scopes = (query.get('scope') ?? '').split(' ').filter(Boolean);
      if (clientId !== app.clientId) return { status: 400, body: 'Authorization failed: unknown client_id' };
      if (redirectUri !== app.redirectUri)
        return { status: 400, body: 'Authorization failed: redirect_uri does not match the app’s redirect URL' };
      if (app.scopes.some((s) => !scopes.includes(s)) || scopes.some((s) => !app.scopes.includes(s)))
        return { status: 400, body: 'Authorization failed: scope does not match the app’s scopes' };
      const to = new URL(redirectUri);
      if (state.deny) {
        state.deny = false;
        to.searchParams.set('error', 'access_denied');
      } else {
        const code = randomUUID();
        codes.set(code, { redirectUri, scopes, at: Date.now() });
        to.searchParams.set('code', code);
      }
      if (query.get('state')) to.searchParams.set('state', query.get('state')!);
      return { status: 302, location: to.toString() };
    }
    if (method === 'POST' && path === '/oauth/v1/token') {
      const f = form ?? new URLSearchParams();
      const refuse = (status: string, message: string): Reply => ({
        status: 400,
        body: { status, message, correlationId: correlationId(), requestId: randomUUID() },
      });
      if (f.get('client_id') !== app.clientId) return refuse('BAD_CLIENT_ID', 'missing or unknown client id');
      if (f.get('client_secret') !== app.clientSecret)
        return refuse('BAD_CLIENT_SECRET', 'missing or invalid client secret');
      if (f.get('grant_type') === 'authorization_code') {
        const code = codes.get(f.get('code') ?? '');
        if (!code || Date.now() - code.at > 300_000) return refuse('BAD_AUTH_CODE', 'missing or unknown auth code');
        if (f.get('redirect_uri') !== code.redirectUri)
          return refuse('BAD_REDIRECT_URI', 'redirect_uri does not match');
        codes.delete(f.get('code')!);
        const refreshToken = randomUUID();
        refreshTokens.set(refreshToken, { hubId: hub.id, scopes: code.scopes, revoked: false });
        return { status: 200, body: issueTokens(hub.id, code.scopes, refreshToken) };
      }
      if (f.get('grant_type') === 'refresh_token') {
        const rt = refreshTokens.get(f.get('refresh_token') ?? '');
        if (!rt || rt.revoked) return refuse('BAD_REFRESH_TOKEN', 'missing or invalid refresh token');
        return { status: 200, body: issueTokens(rt.hubId, rt.scopes, f.get('refresh_token')!) };
      }
      return refuse('BAD_GRANT_TYPE', 'missing or unknown grant_type');
    }
    let m: RegExpExecArray | null;
    if (method === 'GET' && (m = /^\/oauth\/v1\/access-tokens\/([^/]+)$/.exec(path))) {
      const t = tokens.get(decodeURIComponent(m[1]));
      if (!t || t.expiresAt <= Date.now() || refreshTokens.get(t.refreshToken)?.revoked)
        return {
          status: 404,
          body: { status: 'error', message: 'Token not found or expired', correlationId: correlationId() },
        };
      return {
        status: 200,
        body: {
          token: m[1],
          user: 'installer@standin.example',
          hub_domain: hub.domain,
          scopes: t.scopes,
          hub_id: t.hubId,
          app_id: app.id,
          expires_in: Math.floor((t.expiresAt - Date.now()) / 1000),
          user_id: 777,
          token_type: 'access',
        },
      };
    }
    return null;
  }

  // ---------------------------------------------------------------------------------------------

  const rateHeaders = (remaining: number): Record<string, string> => ({
    'X-HubSpot-RateLimit-Interval-Milliseconds': String(limit.windowMs),
    'X-HubSpot-RateLimit-Max': String(limit.max),
    'X-HubSpot-RateLimit-Remaining': String(Math.max(0, remaining)),
  });
  const tooMany = (policy: string, retryAfter?: number): Reply => ({
    status: 429,
    body: {
      status: 'error',
      message: `You have reached your ${policy.toLowerCase()} limit.`,
      errorType: 'RATE_LIMIT',
      correlationId: correlationId(),
      policyName: policy,
      groupName: `publicapi:oauth:${app.id}:${hub.id}`,
    },
    headers: { ...rateHeaders(0), ...(retryAfter !== undefined ? { 'Retry-After': String(retryAfter) } : {}) },
  });

  function handle(req: IncomingMessage, raw: Buffer): Reply {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const type = String(req.headers['content-type'] ?? '');
    const form = type.includes('application/x-www-form-urlencoded') ? new URLSearchParams(raw.toString('utf8')) : null;
    let json: any;
    if (type.includes('application/json') && raw.length) {
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        return hubspotError(400, 'VALIDATION_ERROR', 'Invalid input JSON');
      }
    }
    const record = (r: Reply) => {
      requests.push({
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        json,
        form,
        status: r.status,
      });
      return r;
    };
    const o = oauth(req.method ?? 'GET', url.pathname, url.searchParams, form);
    if (o) return record(o);
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    const token = bearer ? tokens.get(bearer) : undefined;
    if (!token || refreshTokens.get(token.refreshToken)?.revoked)
      return record(
        hubspotError(
          401,
          'INVALID_AUTHENTICATION',
          'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
        ),
      );
    if (token.expiresAt <= Date.now())
      return record(
        hubspotError(
          401,
          'EXPIRED_AUTHENTICATION',
          `The OAuth token used to make this call expired ${Math.ceil((Date.now() - token.expiresAt) / 1000)} second(s) ago.`,
        ),
      );
    if (state.forced.length) return record(state.forced.shift()!);
    const now = Date.now();
    const isSearch = url.pathname.endsWith('/search');
    const window = isSearch ? searches : calls;
    const [max, span] = isSearch ? [5, 1000] : [limit.max, limit.windowMs];
    while (window.length && window[0] <= now - span) window.shift();
    if (window.length >= max) return record(tooMany(isSearch ? 'SECONDLY' : 'TEN_SECONDLY_ROLLING'));
    window.push(now);
    const r = crm(req.method ?? 'GET', url.pathname, json, token);
    return record({ ...r, headers: { ...rateHeaders(max - window.length), ...r.headers } });
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let r: Reply;
      try {
        r = handle(req, Buffer.concat(chunks));
      } catch (err) {
        r = hubspotError(500, 'INTERNAL_ERROR', String(err));
      }
      if (r.location) {
        res.writeHead(302, { location: r.location, 'content-type': 'text/plain' }).end(`Redirecting to ${r.location}`);
        return;
      }
      const isText = typeof r.body === 'string';
      res.writeHead(r.status, {
        'content-type': isText ? 'text/plain' : 'application/json;charset=utf-8',
        ...r.headers,
      });
      res.end(r.body === undefined ? undefined : isText ? r.body : JSON.stringify(r.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    /** HubSpot's install page is on app.hubspot.com; here it is this server's `/oauth/authorize`. */
    authorizeUrl: `${url}/oauth/authorize`,
    app,
    hub,
    requests,
    contacts: objects.contacts,
    companies: objects.companies,
    notes: objects.notes,
    contactCompany,
    noteContacts,
    contactByEmail,
    companiesByDomain: (domain: string) =>
      [...objects.companies.values()].filter((c) => c.properties.domain?.toLowerCase() === domain.toLowerCase()),
    /** Seeds a contact HubSpot holds already (made by a person there). */
    addContact: (properties: Record<string, string>) =>
      newObject('contacts', { ...properties, ...(properties.email ? { email: properties.email.toLowerCase() } : {}) }),
    /** Seeds a company (long indexed: search finds it). */
    addCompany: (properties: Record<string, string>) =>
      newObject('companies', properties, new Date(Date.now() - 86_400_000)),
    /** The access tokens issued so far expire (as after 30 minutes): calls answer 401 EXPIRED_AUTHENTICATION. */
    expireAccessTokens() {
      for (const t of tokens.values()) t.expiresAt = Date.now() - 1000;
    },
    /** The app is uninstalled from the hub: its tokens are refused, and so is every refresh (BAD_REFRESH_TOKEN). */
    uninstall() {
      for (const rt of refreshTokens.values()) rt.revoked = true;
    },
    /** The next install is declined by the user (`error=access_denied`). */
    denyNext() {
      state.deny = true;
    },
    /** The next `n` CRM calls answer 429 with this policy (TEN_SECONDLY_ROLLING, SECONDLY, DAILY) and its headers. */
    rateLimitNext(n: number, policy = 'TEN_SECONDLY_ROLLING', retryAfter?: number) {
      for (let i = 0; i < n; i++) state.forced.push(tooMany(policy, retryAfter));
    },
    /** The next `n` CRM calls answer this status and HubSpot error body. */
    failNext(n: number, status: number, category: string, message = `HTTP ${status}`) {
      for (let i = 0; i < n; i++) state.forced.push(hubspotError(status, category, message));
    },
    set searchLagMs(ms: number) {
      state.searchLagMs = ms;
    },
    set multiStatus(on: boolean) {
      state.multiStatus = on;
    },
    /** The CRM requests received (OAuth ones excluded), optionally from an index on. */
    crmRequests: (from = 0) => requests.slice(from).filter((r) => r.path.startsWith('/crm/')),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
