// The partner CRM over HubSpot's CRM API v3 (docs/partner.md), a public app installed by OAuth:
// - OAuth: the browser opens HUBSPOT_AUTHORIZE_URL (client_id, redirect_uri, scope, state); the code
//   and later the refresh token are exchanged at `POST <api>/oauth/v1/token` (form body with the
//   client secret); `GET <api>/oauth/v1/access-tokens/{token}` names the account (hub_id).
// - Leads → contacts, one per contact of ours: updated by the id HubSpot gave it
//   (`batch/update`), else upserted by email (`batch/upsert`, idProperty email), else created
//   (no email). Before the first push of a contact HubSpot already holds (`batch/read` by email),
//   a differing value of a field it has is a field conflict for a person, not overwritten.
// - Their companies by domain: the id kept from before, else found (`companies/search`, domain IN)
//   or created (`batch/create`) — HubSpot's domain is not a unique property, so it cannot be
//   upserted by it; ids are kept because search lags behind writes. Then contact↔company
//   associations (v4 `batch/associate/default`).
// - Replies and meetings → one note each on the lead's contact (`notes/batch/create` with the
//   association, type 202), later updated by its id.
// Every write carries an objectWriteTraceId per input (our key), so a 207 names the inputs that
// failed: those records are `rejected`, the rest go through; a batch refused whole (400/409) is
// split in halves until each refusal names its input. Calls wait for the install's token bucket
// (HUBSPOT_RATE); a 401 refreshes the token once through the session, a short 429 is waited out once.
import {
  JsonHttpClient,
  parseWire,
  splitName,
  type ProviderErrorCode,
  type ProviderErrorDetails,
} from '../provider-http.js';
import { PaceExceeded, ProviderPace } from '../provider-pace.js';
import {
  HUBSPOT_BATCH,
  HUBSPOT_RATE,
  HUBSPOT_SEARCH_RATE,
  hubspotErrorOf,
  hubspotOAuthErrorOf,
  tracesOf,
  wireBatch,
  wireSearch,
  wireTokenInfo,
  wireTokens,
  type WireObject,
} from './hubspot-wire.js';
import {
  PARTNER_BATCH,
  PartnerError,
  type PartnerAccount,
  type PartnerAdapter,
  type PartnerConflictField,
  type PartnerFieldValue,
  type PartnerRecord,
  type PartnerResult,
  type PartnerSession,
  type PartnerTokens,
} from './types.js';

export interface HubSpotOptions {
  /** HUBSPOT_API_BASE_URL (`https://api.hubapi.com`). */
  apiBaseUrl: string;
  /** HUBSPOT_AUTHORIZE_URL (`https://app.hubspot.com/oauth/authorize`). */
  authorizeUrl: string;
  clientId: string;
  clientSecret: string;
  /** Space-separated scopes asked for at install, and required of the token. */
  scope: string;
  timeoutMs?: number;
  /** Tests: the paces (a fake clock). */
  pace?: ProviderPace;
  searchPace?: ProviderPace;
}

/** The adapter's own kinds in the id store: HubSpot's contact per contact of ours, company per domain. */
export const HS_CONTACT = 'hs_contact';
export const HS_COMPANY = 'hs_company';
/** HubSpot's association type of a note to a contact (HUBSPOT_DEFINED). */
const NOTE_TO_CONTACT = 202;
const NOTE_BODY_MAX = 65_000;

/** Our lead fields → HubSpot's default contact properties (docs/partner.md "Mapping"). */
export const CONTACT_PROPERTIES: readonly (readonly [string, string])[] = [
  ['email', 'email'],
  ['first_name', 'firstname'],
  ['last_name', 'lastname'],
  ['title', 'jobtitle'],
  ['company', 'company'],
  ['phone', 'phone'],
  ['country', 'country'],
];

const str = (v: PartnerFieldValue | undefined) => (v === null || v === undefined ? '' : String(v).trim());

/** A lead's contact properties: empty values are left out (we never clear a value in HubSpot). */
export function contactProperties(f: Record<string, PartnerFieldValue>): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [ours, theirs] of CONTACT_PROPERTIES) {
    const v = ours === 'email' ? str(f.email).toLowerCase() : str(f[ours]);
    if (v) values[theirs] = v;
  }
  if (!values.firstname && !values.lastname && str(f.full_name)) {
    const { firstName, lastName } = splitName(str(f.full_name));
    if (firstName) values.firstname = firstName;
    if (lastName) values.lastname = lastName;
  }
  return values;
}

/** `https://www.Example.com/about` → `example.com`; null when it is not a domain name. */
export function normaliseDomain(raw: PartnerFieldValue | undefined): string | null {
  const d = str(raw)
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/[/?#].*$/, '')
    .replace(/:\d+$/, '')
    .replace(/^www\./, '')
    .replace(/\.$/, '');
  return /^(?=.{4,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(d) ? d : null;
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const lines = (s: string) => escapeHtml(s).replace(/\r?\n/g, '<br>');

/** A reply's or meeting's note (hs_note_body is HTML, at most 65,536 characters). */
export function noteProperties(r: PartnerRecord, now = new Date()): Record<string, string> {
  const f = r.fields;
  let body: string;
  let at: string;
  if (r.kind === 'reply') {
    const subject = str(f.subject);
    body = `<p><strong>Reply received (${escapeHtml(str(f.channel) || 'message')})</strong>${subject ? ` — ${escapeHtml(subject)}` : ''}</p><p>${lines(str(f.body))}</p>`;
    at = str(f.sent_at);
  } else {
    const when = [str(f.starts_at), str(f.ends_at)].filter(Boolean).join(' – ');
    const status = [str(f.status), str(f.outcome)].filter(Boolean).join(', ');
    body =
      `<p><strong>Meeting: ${escapeHtml(str(f.title) || 'untitled')}</strong></p>` +
      `<p>${[status, when, str(f.location)].filter(Boolean).map(escapeHtml).join('<br>')}</p>`;
    at = str(f.starts_at);
  }
  return { hs_timestamp: at || now.toISOString(), hs_note_body: body.slice(0, NOTE_BODY_MAX) };
}

type Outcome = { ok: true; object: WireObject } | { ok: false; reason: string; message: string };
interface WriteInput {
  /** Our key, sent as the input's objectWriteTraceId. */
  trace: string;
  body: Record<string, unknown>;
}

const rejected = (externalId: string, reason: string, message: string): PartnerResult => ({
  externalId,
  status: 'rejected',
  error: { reason, message: message.slice(0, 500) },
});

const chunks = <T>(xs: T[], n = HUBSPOT_BATCH): T[][] =>
  Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

export class HubSpotPartner implements PartnerAdapter {
  readonly local = false;
  readonly label = 'HubSpot';
  private readonly api: JsonHttpClient;
  private readonly oauth: JsonHttpClient;
  private readonly pace: ProviderPace;
  private readonly searchPace: ProviderPace;
  private readonly scopes: string[];

  constructor(private readonly opts: HubSpotOptions) {
    const error = (code: ProviderErrorCode, message: string, details?: ProviderErrorDetails) =>
      new PartnerError(code, message, details);
    // No key of its own: each request carries its bearer token, the token form the client secret
    // (`accept` as the key header makes the client's default header a no-op).
    const client = (errorOf: typeof hubspotErrorOf) =>
      new JsonHttpClient(
        'partner',
        {
          baseUrl: opts.apiBaseUrl,
          apiKey: 'application/json',
          keyHeader: 'accept',
          timeoutMs: opts.timeoutMs,
          errorOf,
        },
        error,
      );
    this.api = client(hubspotErrorOf);
    this.oauth = client(hubspotOAuthErrorOf);
    this.pace = opts.pace ?? new ProviderPace(HUBSPOT_RATE);
    this.searchPace = opts.searchPace ?? new ProviderPace(HUBSPOT_SEARCH_RATE);
    this.scopes = opts.scope.split(/\s+/).filter(Boolean);
  }

  // -------------------------------------------------------------------------------------------
  // OAuth

  /** HubSpot's install URL (no PKCE: its authorize page documents none; the client secret and the single-use state protect the code). */
  authorizationUrl(input: { state: string; redirectUri: string; codeChallenge: string }): string {
    const url = new URL(this.opts.authorizeUrl);
    const q: [string, string][] = [
      ['client_id', this.opts.clientId],
      ['redirect_uri', input.redirectUri],
      ['scope', this.scopes.join(' ')],
      ['state', input.state],
    ];
    // Spaces as %20 (encodeURIComponent), as HubSpot's own example builds it.
    url.search = q.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
    return url.toString();
  }

  exchangeCode(input: { code: string; redirectUri: string; codeVerifier: string }): Promise<PartnerTokens> {
    return this.token({ grant_type: 'authorization_code', redirect_uri: input.redirectUri, code: input.code });
  }

  refresh(refreshToken: string): Promise<PartnerTokens> {
    return this.token({ grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  async account(accessToken: string): Promise<PartnerAccount> {
    const raw = await this.oauth.json('GET', `oauth/v1/access-tokens/${encodeURIComponent(accessToken)}`);
    const info = parseWire(this.oauth, wireTokenInfo, raw);
    const missing = this.scopes.filter((s) => !info.scopes.includes(s));
    if (missing.length)
      throw new PartnerError('auth', `the installation lacks the scopes ${missing.join(', ')}: install the app again`, {
        reason: 'MISSING_SCOPES',
      });
    return { accountId: String(info.hub_id), name: info.hub_domain?.trim() || null };
  }

  private async token(grant: Record<string, string>): Promise<PartnerTokens> {
    const form = new URLSearchParams({
      ...grant,
      client_id: this.opts.clientId,
      client_secret: this.opts.clientSecret,
    });
    const t = parseWire(this.oauth, wireTokens, await this.oauth.json('POST', 'oauth/v1/token', { form }));
    return {
      accessToken: t.access_token,
      refreshToken: t.refresh_token ?? grant.refresh_token ?? null,
      expiresAt: t.expires_in ? new Date(Date.now() + t.expires_in * 1000) : null,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Records

  async upsert(session: PartnerSession, records: PartnerRecord[]): Promise<PartnerResult[]> {
    if (records.length > PARTNER_BATCH) throw new Error(`at most ${PARTNER_BATCH} records per upsert`);
    const out = new Map<string, PartnerResult>();
    const leads = records.filter((r) => r.kind === 'lead');
    const notes = records.filter((r) => r.kind !== 'lead');
    for (const r of leads.length ? await this.pushLeads(session, leads) : []) out.set(r.externalId, r);
    for (const r of notes.length ? await this.pushNotes(session, notes) : []) out.set(r.externalId, r);
    return records.map((r) => out.get(r.externalId)!);
  }

  /** Leads → one contact per contact of ours (leads of the same person share it), its company and their association. */
  private async pushLeads(session: PartnerSession, records: PartnerRecord[]): Promise<PartnerResult[]> {
    interface Group {
      key: string;
      leads: PartnerRecord[];
      properties: Record<string, string>;
      overwrite: boolean;
      contactId?: string;
      result?: (externalId: string) => PartnerResult;
    }
    const groups = new Map<string, Group>();
    for (const r of records) {
      const key = str(r.fields.contact_id) || r.externalId;
      const g = groups.get(key) ?? { key, leads: [], properties: contactProperties(r.fields), overwrite: false };
      g.leads.push(r);
      if (r.resolve) g.overwrite = true;
      groups.set(key, g);
    }
    const done = (g: Group, id: string) => {
      g.contactId = id;
      g.result = (externalId) => ({ externalId, status: 'upserted', partnerId: id });
    };
    const fail = (g: Group, reason: string, message: string) => {
      g.result = (externalId) => rejected(externalId, reason, message);
    };
    const known = await session.ids.get(HS_CONTACT, [...groups.keys()]);

    // 1. Contacts we made or found before: updated by their id.
    const byId = [...groups.values()].filter((g) => known.has(g.key));
    const updated = await this.write(
      session,
      'crm/v3/objects/contacts/batch/update',
      byId.map((g) => ({ trace: g.key, body: { id: known.get(g.key)!, properties: g.properties } })),
    );
    const gone: string[] = [];
    for (const g of byId) {
      const o = updated.get(g.key)!;
      if (o.ok) done(g, o.object.id);
      else if (o.reason === 'OBJECT_NOT_FOUND')
        gone.push(g.key); // deleted or merged away in HubSpot
      else fail(g, o.reason, o.message);
    }
    if (gone.length) await session.ids.forget(HS_CONTACT, gone);

    // 2. The others: by email (a contact HubSpot holds already is checked for conflicts first), else created.
    const rest = [...groups.values()].filter((g) => !g.result);
    const withEmail = rest.filter((g) => g.properties.email);
    const theirs = await this.readContactsByEmail(
      session,
      withEmail.filter((g) => !g.overwrite).map((g) => g.properties.email),
    );
    const toUpsert: Group[] = [];
    for (const g of withEmail) {
      const existing = theirs.get(g.properties.email);
      const conflicts = existing && !g.overwrite ? conflictsOf(g.properties, existing.properties) : [];
      if (existing && conflicts.length)
        g.result = (externalId) => ({ externalId, status: 'conflict', partnerId: existing.id, conflicts });
      else toUpsert.push(g);
    }
    const upserted = await this.write(
      session,
      'crm/v3/objects/contacts/batch/upsert',
      toUpsert.map((g) => ({
        trace: g.key,
        body: { id: g.properties.email, idProperty: 'email', properties: g.properties },
      })),
      (o) => toUpsert.find((g) => g.properties.email === o.properties.email?.toLowerCase())?.key ?? null,
    );
    for (const g of toUpsert) {
      const o = upserted.get(g.key)!;
      if (o.ok) done(g, o.object.id);
      else fail(g, o.reason, o.message);
    }
    const toCreate: Group[] = [];
    for (const g of rest.filter((x) => !x.properties.email)) {
      if (g.properties.firstname || g.properties.lastname) toCreate.push(g);
      else fail(g, 'MISSING_IDENTITY', 'HubSpot needs an email, a first name or a last name for a contact');
    }
    const created = await this.write(
      session,
      'crm/v3/objects/contacts/batch/create',
      toCreate.map((g) => ({ trace: g.key, body: { properties: g.properties } })),
    );
    for (const g of toCreate) {
      const o = created.get(g.key)!;
      if (o.ok) done(g, o.object.id);
      else fail(g, o.reason, o.message);
    }
    const pushed = [...groups.values()].filter((g) => g.contactId);
    await session.ids.put(HS_CONTACT, new Map(pushed.map((g) => [g.key, g.contactId!])));

    // 3. Their companies and the associations (a failure there does not undo the contact).
    const domainOf = new Map<Group, string>();
    const names = new Map<string, string>();
    for (const g of pushed) {
      const f = g.leads[0].fields;
      const domain = normaliseDomain(f.company_domain);
      if (!domain) continue;
      domainOf.set(g, domain);
      if (!names.get(domain)) names.set(domain, str(f.company));
    }
    if (names.size) {
      const companies = await this.companies(session, names);
      const pairs = new Map<string, { from: { id: string }; to: { id: string } }>();
      for (const [g, domain] of domainOf) {
        const company = companies.get(domain);
        if (company) pairs.set(`${g.contactId}:${company}`, { from: { id: g.contactId! }, to: { id: company } });
      }
      for (const inputs of chunks([...pairs.values()]))
        await this.call(session, 'crm/v4/associations/contacts/companies/batch/associate/default', { inputs });
    }

    return records.map((r) => groups.get(str(r.fields.contact_id) || r.externalId)!.result!(r.externalId));
  }

  /** HubSpot's contacts with these emails (batch read by the email property), by lowercased email. */
  private async readContactsByEmail(session: PartnerSession, emails: string[]): Promise<Map<string, WireObject>> {
    const found = new Map<string, WireObject>();
    for (const part of chunks([...new Set(emails)])) {
      const raw = await this.call(session, 'crm/v3/objects/contacts/batch/read', {
        idProperty: 'email',
        properties: CONTACT_PROPERTIES.map(([, p]) => p),
        inputs: part.map((id) => ({ id })),
      });
      // Emails HubSpot does not hold come back as OBJECT_NOT_FOUND errors (207): nothing to compare.
      for (const o of parseWire(this.api, wireBatch, raw).results) {
        const email = o.properties.email?.toLowerCase();
        if (email) found.set(email, o);
      }
    }
    return found;
  }

  /** The HubSpot company of each domain: kept from before, found by search, or created (named after our company). */
  private async companies(session: PartnerSession, names: Map<string, string>): Promise<Map<string, string>> {
    const ids = await session.ids.get(HS_COMPANY, [...names.keys()]);
    const fresh = new Map<string, string>();
    const missing = [...names.keys()].filter((d) => !ids.has(d));
    for (const part of chunks(missing)) {
      const hits: WireObject[] = [];
      let after: string | null = null;
      for (let page = 0; page < 10; page++) {
        const raw = await this.call(
          session,
          'crm/v3/objects/companies/search',
          {
            filterGroups: [{ filters: [{ propertyName: 'domain', operator: 'IN', values: part }] }],
            properties: ['domain', 'name'],
            limit: 100,
            ...(after ? { after } : {}),
          },
          this.searchPace,
        );
        const res = parseWire(this.api, wireSearch, raw);
        hits.push(...res.results);
        after = res.paging?.next?.after ?? null;
        if (!after) break;
      }
      // Several companies with one domain: the oldest (lowest id) is the one we use.
      hits.sort((a, b) => Number(a.id) - Number(b.id) || a.id.localeCompare(b.id));
      for (const h of hits) {
        const d = normaliseDomain(h.properties.domain);
        if (d && names.has(d) && !fresh.has(d)) fresh.set(d, h.id);
      }
    }
    const toCreate = missing.filter((d) => !fresh.has(d));
    const created = await this.write(
      session,
      'crm/v3/objects/companies/batch/create',
      toCreate.map((d) => ({ trace: d, body: { properties: { domain: d, name: names.get(d) || d } } })),
    );
    for (const d of toCreate) {
      const o = created.get(d)!;
      if (o.ok) fresh.set(d, o.object.id);
    }
    await session.ids.put(HS_COMPANY, fresh);
    return new Map([...ids, ...fresh]);
  }

  /** Replies and meetings → a note each on the lead's contact; a note made before is updated by its id. */
  private async pushNotes(session: PartnerSession, records: PartnerRecord[]): Promise<PartnerResult[]> {
    const out = new Map<string, PartnerResult>();
    const leadIds = [...new Set(records.map((r) => str(r.fields.lead_external_id)).filter(Boolean))];
    const contacts = await session.ids.get('lead', leadIds);
    const own = new Map<string, string>();
    for (const kind of new Set(records.map((r) => r.kind)))
      for (const [k, v] of await session.ids.get(
        kind,
        records.filter((r) => r.kind === kind).map((r) => r.externalId),
      ))
        own.set(k, v);

    const toUpdate = records.filter((r) => own.has(r.externalId));
    const updated = await this.write(
      session,
      'crm/v3/objects/notes/batch/update',
      toUpdate.map((r) => ({
        trace: r.externalId,
        body: { id: own.get(r.externalId)!, properties: noteProperties(r) },
      })),
    );
    const gone: PartnerRecord[] = [];
    for (const r of toUpdate) {
      const o = updated.get(r.externalId)!;
      if (o.ok) out.set(r.externalId, { externalId: r.externalId, status: 'upserted', partnerId: o.object.id });
      else if (o.reason === 'OBJECT_NOT_FOUND') gone.push(r);
      else out.set(r.externalId, rejected(r.externalId, o.reason, o.message));
    }
    for (const kind of new Set(gone.map((r) => r.kind)))
      await session.ids.forget(
        kind,
        gone.filter((r) => r.kind === kind).map((r) => r.externalId),
      );

    const toCreate: PartnerRecord[] = [];
    for (const r of records.filter((x) => !out.has(x.externalId))) {
      if (contacts.has(str(r.fields.lead_external_id))) toCreate.push(r);
      else
        out.set(
          r.externalId,
          rejected(
            r.externalId,
            'LEAD_NOT_SYNCED',
            'its lead is not in HubSpot (held back, rejected or not synced yet)',
          ),
        );
    }
    const created = await this.write(
      session,
      'crm/v3/objects/notes/batch/create',
      toCreate.map((r) => ({
        trace: r.externalId,
        body: {
          properties: noteProperties(r),
          associations: [
            {
              to: { id: contacts.get(str(r.fields.lead_external_id))! },
              types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: NOTE_TO_CONTACT }],
            },
          ],
        },
      })),
    );
    const made = new Map<string, Map<string, string>>();
    for (const r of toCreate) {
      const o = created.get(r.externalId)!;
      if (!o.ok) {
        out.set(r.externalId, rejected(r.externalId, o.reason, o.message));
        continue;
      }
      out.set(r.externalId, { externalId: r.externalId, status: 'upserted', partnerId: o.object.id });
      made.set(r.kind, (made.get(r.kind) ?? new Map()).set(r.externalId, o.object.id));
    }
    // Kept at once: a page retried before it commits updates these notes instead of adding twins.
    for (const [kind, ids] of made) await session.ids.put(kind, ids);
    return records.map((r) => out.get(r.externalId)!);
  }

  // -------------------------------------------------------------------------------------------
  // The exchange

  /**
   * A batch write (≤100 inputs a request, in order), answered per input: HubSpot's object or its
   * error. Results are matched by objectWriteTraceId (else by `match`); errors by the trace ids their
   * context names. A request refused whole (400/409: one bad input fails them all) is split in halves
   * until each refusal names one input.
   */
  private async write(
    session: PartnerSession,
    path: string,
    inputs: WriteInput[],
    match?: (o: WireObject) => string | null,
  ): Promise<Map<string, Outcome>> {
    const out = new Map<string, Outcome>();
    const send = async (part: WriteInput[]): Promise<void> => {
      let raw: unknown;
      try {
        raw = await this.call(session, path, {
          inputs: part.map((i) => ({ ...i.body, objectWriteTraceId: i.trace })),
        });
      } catch (err) {
        const whole =
          err instanceof PartnerError &&
          err.code === 'invalid_request' &&
          (err.details.status === 400 || err.details.status === 409);
        if (!whole) throw err;
        if (part.length === 1) {
          out.set(part[0].trace, { ok: false, reason: err.details.reason ?? 'VALIDATION_ERROR', message: err.message });
          return;
        }
        const half = Math.ceil(part.length / 2);
        await send(part.slice(0, half));
        await send(part.slice(half));
        return;
      }
      const answer = parseWire(this.api, wireBatch, raw);
      if (answer.status !== 'COMPLETE')
        throw new PartnerError('unavailable', `the batch ended ${answer.status}, not COMPLETE`, {
          reason: answer.status,
        });
      const sent = new Set(part.map((i) => i.trace));
      for (const o of answer.results) {
        const trace = o.objectWriteTraceId && sent.has(o.objectWriteTraceId) ? o.objectWriteTraceId : match?.(o);
        if (trace && sent.has(trace)) out.set(trace, { ok: true, object: o });
      }
      const untraced: { reason: string; message: string }[] = [];
      for (const e of answer.errors ?? []) {
        const error = { reason: e.category ?? 'ERROR', message: e.message ?? 'refused by HubSpot' };
        const traces = tracesOf(e, sent);
        if (!traces.length) untraced.push(error);
        for (const t of traces) if (!out.has(t)) out.set(t, { ok: false, ...error });
      }
      for (const i of part)
        if (!out.has(i.trace))
          out.set(
            i.trace,
            untraced[0]
              ? { ok: false, ...untraced[0] }
              : { ok: false, reason: 'NO_RESULT', message: 'HubSpot answered nothing for this input' },
          );
    };
    for (const part of chunks(inputs)) await send(part);
    return out;
  }

  /** One call for an installation: paced per account, a refused token refreshed once, a short 429 waited out once. */
  private async call(
    session: PartnerSession,
    path: string,
    body: unknown,
    pace: ProviderPace = this.pace,
  ): Promise<unknown> {
    let refreshed = false;
    let waited = false;
    for (;;) {
      try {
        await pace.take(session.accountId);
      } catch (err) {
        if (err instanceof PaceExceeded)
          throw new PartnerError('rate_limited', err.message, {
            reason: 'PACE',
            retryAfterSeconds: Math.ceil(err.waitMs / 1000),
          });
        throw err;
      }
      try {
        return await this.api.json('POST', path, {
          body,
          headers: { authorization: `Bearer ${session.accessToken}` },
        });
      } catch (err) {
        if (!(err instanceof PartnerError)) throw err;
        if (err.code === 'auth' && err.details.status === 401 && !refreshed) {
          refreshed = true;
          session.accessToken = await session.refresh();
          continue;
        }
        if (err.code === 'rate_limited') {
          const waitMs = (err.retryAfterSeconds ?? 10) * 1000;
          pace.pause(session.accountId, new Date(Date.now() + waitMs));
          if (!waited && waitMs <= 60_000) {
            waited = true;
            continue;
          }
        }
        throw err;
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.api.close(), this.oauth.close()]);
  }
}

/** Fields HubSpot holds with another non-empty value than ours (ours non-empty): a person there may have set them. */
function conflictsOf(ours: Record<string, string>, theirs: Record<string, string | null>): PartnerConflictField[] {
  const out: PartnerConflictField[] = [];
  for (const [field, property] of CONTACT_PROPERTIES) {
    if (property === 'email') continue;
    const a = ours[property];
    const b = theirs[property]?.trim();
    if (a && b && a !== b) out.push({ field, ours: a, theirs: b });
  }
  return out;
}
