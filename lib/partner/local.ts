// The deterministic local partner CRM, the default (PARTNER_PROVIDER unset or `local`), so installing,
// syncing and resolving partner events all run offline (docs/partner.md "Local partner"). It
// stores what it would hold in `partner_sandbox_records` (one row per account, kind and external id;
// `versions` counts the pushes that changed it). Its rules:
// - OAuth: the authorize page is our own `/oauth/partner/local/authorize`, which consents at once
//   with a code carrying the PKCE challenge (checked at the exchange); access tokens `lpt_<subject>_…`.
// - A lead whose email's local part starts with `conflict` exists in the partner already, with its
//   `title` edited by a person there ("Edited in the CRM"): the first push reports a field conflict.
// - A lead whose email's local part starts with `dup` looks like an existing partner record with the
//   same email: the first push reports a possible duplicate (candidate `p_dup_<hash of the email>`).
// - Once a record of ours exists there (pushed, or confirmed with a resolution), it is upserted
//   plainly: `unchanged` when its fields are the same, else `upserted` (versions + 1).
import { createHash } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { localAuthorizationCode, localCodeRefusal, readLocalCode } from '../oauth-pkce.js';
import {
  PartnerError,
  type PartnerAccount,
  type PartnerAdapter,
  type PartnerFieldValue,
  type PartnerRecord,
  type PartnerResult,
  type PartnerSession,
  type PartnerTokens,
} from './types.js';

const hex = (s: string, n = 16) => createHash('sha256').update(s).digest('hex').slice(0, n);

export const LOCAL_EDITED_TITLE = 'Edited in the CRM';
export const localAuthorizePath = '/oauth/partner/local/authorize';
/** The partner id of the local duplicate candidate for an email. */
export const localDuplicateId = (email: string) => `p_dup_${hex(`dup:${email.toLowerCase()}`, 12)}`;

/** Field maps compared independently of key order (jsonb reorders keys). */
const canonical = (f: Record<string, PartnerFieldValue>) =>
  JSON.stringify(
    Object.keys(f)
      .sort()
      .map((k) => [k, f[k]]),
  );
const subjectOf = (accessToken: string) => /^lpt_([0-9a-f]{16})_/.exec(accessToken)?.[1] ?? null;
const localPart = (email: PartnerFieldValue) => (typeof email === 'string' ? email.split('@')[0].toLowerCase() : '');

export { localAuthorizationCode };

export class LocalPartner implements PartnerAdapter {
  readonly local = true;
  readonly label = 'Partner CRM';

  constructor(private readonly opts: { orm: Pick<MikroORM, 'em'>; publicBaseUrl: string; now?: () => Date }) {}

  authorizationUrl(input: { state: string; redirectUri: string; codeChallenge: string }): string {
    const url = new URL(`${this.opts.publicBaseUrl.replace(/\/+$/, '')}${localAuthorizePath}`);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', 'local-partner-client');
    url.searchParams.set('redirect_uri', input.redirectUri);
    url.searchParams.set('state', input.state);
    url.searchParams.set('code_challenge', input.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
    return url.toString();
  }

  async exchangeCode(input: { code: string; redirectUri: string; codeVerifier: string }): Promise<PartnerTokens> {
    const code = readLocalCode(input.code);
    const why = localCodeRefusal(code, 'partner', input.redirectUri, input.codeVerifier);
    if (why) throw new PartnerError('auth', `the authorization grant was refused: ${why}`);
    return this.tokens(code!.s);
  }

  async refresh(refreshToken: string): Promise<PartnerTokens> {
    const subject = /^lprt_([0-9a-f]{16})$/.exec(refreshToken)?.[1];
    if (!subject) throw new PartnerError('auth', 'the refresh token was refused');
    return this.tokens(subject);
  }

  async account(accessToken: string): Promise<PartnerAccount> {
    const subject = subjectOf(accessToken);
    if (!subject) throw new PartnerError('auth', 'HTTP 401: the access token was refused');
    return { accountId: `partner_${subject}`, name: `Local partner CRM ${subject.slice(0, 4)}` };
  }

  async upsert(session: Pick<PartnerSession, 'accessToken'>, records: PartnerRecord[]): Promise<PartnerResult[]> {
    const { accountId } = await this.account(session.accessToken);
    const em = this.opts.orm.em.fork();
    const existing = new Map<string, { partner_id: string; fields: Record<string, PartnerFieldValue> }>();
    if (records.length) {
      const rows = await em.execute<
        { record_kind: string; external_id: string; partner_id: string; fields: Record<string, PartnerFieldValue> }[]
      >(
        `select record_kind, external_id, partner_id, fields from partner_sandbox_records
          where account_id = ? and (record_kind, external_id) in (select * from json_to_recordset(?::json) as r(kind text, id text))`,
        [accountId, JSON.stringify(records.map((r) => ({ kind: r.kind, id: r.externalId })))],
      );
      for (const r of rows) existing.set(`${r.record_kind}:${r.external_id}`, r);
    }
    const results: PartnerResult[] = [];
    const writes: { kind: string; id: string; partner_id: string; fields: Record<string, PartnerFieldValue> }[] = [];
    for (const r of records) {
      const key = `${r.kind}:${r.externalId}`;
      const had = existing.get(key);
      const partnerId =
        r.resolve?.mode === 'link' ? r.resolve.partnerId : (had?.partner_id ?? `p_${hex(`${accountId}:${key}`)}`);
      if (!had && r.kind === 'lead' && !r.resolve) {
        const lp = localPart(r.fields.email);
        if (lp.startsWith('dup')) {
          const email = String(r.fields.email);
          results.push({
            externalId: r.externalId,
            status: 'duplicate',
            candidate: {
              partnerId: localDuplicateId(email),
              match: 'email',
              fields: { email, full_name: 'Existing CRM contact' },
            },
          });
          continue;
        }
        if (lp.startsWith('conflict') && r.fields.title !== LOCAL_EDITED_TITLE) {
          results.push({
            externalId: r.externalId,
            status: 'conflict',
            partnerId,
            conflicts: [{ field: 'title', ours: r.fields.title ?? null, theirs: LOCAL_EDITED_TITLE }],
          });
          continue;
        }
      }
      if (had && had.partner_id === partnerId && canonical(had.fields) === canonical(r.fields)) {
        results.push({ externalId: r.externalId, status: 'unchanged', partnerId });
        continue;
      }
      existing.set(key, { partner_id: partnerId, fields: r.fields });
      writes.push({ kind: r.kind, id: r.externalId, partner_id: partnerId, fields: r.fields });
      results.push({ externalId: r.externalId, status: 'upserted', partnerId });
    }
    if (writes.length) {
      await em.execute(
        `insert into partner_sandbox_records (id, account_id, record_kind, external_id, partner_id, fields, versions, created_at, updated_at)
         select gen_random_uuid(), ?, w.kind, w.id, w.partner_id, w.fields, 1, now(), now() from json_to_recordset(?::json) as w(kind text, id text, partner_id text, fields jsonb)
         on conflict (account_id, record_kind, external_id)
         do update set partner_id = excluded.partner_id, fields = excluded.fields, versions = partner_sandbox_records.versions + 1, updated_at = now()`,
        [accountId, JSON.stringify(writes)],
      );
    }
    return results;
  }

  private tokens(subject: string): PartnerTokens {
    const now = this.opts.now?.() ?? new Date();
    return {
      accessToken: `lpt_${subject}_${now.getTime().toString(36)}`,
      refreshToken: `lprt_${subject}`,
      expiresAt: new Date(now.getTime() + 3_600_000),
    };
  }
}
