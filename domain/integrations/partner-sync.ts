// The partner CRM sync (docs/integrations.md "Sync" and "Partner events"). `partner-sync:<id>` pushes
// the workspace's leads, replies and meetings in pages, kind by kind, each page resuming after the
// kind's high-water mark (partner_sync_cursors: the (changed_at, id) of the last record read). A
// record is sent only when its fields differ from the version last pushed (partner_pushes: SHA-256
// per record, and the id the partner gave it, which the adapter updates by), so a re-run — or a
// retried page — pushes nothing twice. Records the partner holds back (a field conflict, a possible
// duplicate) or rejects become partner events; `confirm` applies a person's resolution to one, once.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Integration, type IIntegration } from '../../db/entities/Integration.js';
import { PartnerEvent, type IPartnerEvent } from '../../db/entities/PartnerEvent.js';
import { isUuid, uuidv7 } from '../../lib/ids.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import {
  PARTNER_BATCH,
  PartnerError,
  type PartnerFieldValue,
  type PartnerIdStore,
  type PartnerRecord,
  type PartnerRecordKind,
  type PartnerResolve,
  type PartnerResult,
  type PartnerSession,
} from '../../lib/partner/types.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { markPartnerRefused, onlyManagers, PARTNER, usablePartnerToken, type IntegrationDeps } from './integrations.js';

export type PartnerSyncDeps = Pick<IntegrationDeps, 'partner' | 'config'>;

export const EVENT_KINDS = ['field_conflict', 'possible_duplicate', 'push_rejected'] as const;
export const EVENT_STATES = ['pending', 'confirmed'] as const;
export const CONFLICT_RESOLUTIONS = ['keep_ours', 'keep_theirs', 'merge'] as const;
export const DUPLICATE_RESOLUTIONS = ['link_existing', 'keep_separate'] as const;
/** A record the partner refused: pushed again as it is now (after a person fixed it). */
export const REJECTED_RESOLUTIONS = ['retry'] as const;
export const RESOLUTIONS = [...CONFLICT_RESOLUTIONS, ...DUPLICATE_RESOLUTIONS, ...REJECTED_RESOLUTIONS] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

/** Contact fields a resolution may write (the partner's value, or a merged one). */
const WRITABLE_LEAD_FIELDS = [
  'email',
  'first_name',
  'last_name',
  'full_name',
  'title',
  'company',
  'phone',
  'country',
] as const;

interface SourceRow {
  id: string;
  changed_at: string;
  fields: Record<string, PartnerFieldValue>;
}

// One query per record kind: the page after a cursor, or the given ids. `changed_at` is read as text
// so the cursor keeps PostgreSQL's microseconds (a JS Date would round them and re-read the row).
const SOURCES: Record<PartnerRecordKind, { select: string; from: string; changed: string; id: string }> = {
  lead: {
    select: `json_build_object('email', c.email, 'first_name', c.first_name, 'last_name', c.last_name, 'full_name', c.full_name, 'title', c.title,
               'company', c.company, 'company_domain', c.company_domain, 'phone', c.phone, 'country', c.country, 'profile_url', c.profile_url,
               'list_id', l.list_id, 'contact_id', c.id)`,
    from: `leads l join contacts c on c.id = l.contact_id where l.workspace_id = ?`,
    changed: `greatest(l.updated_at, c.updated_at)`,
    id: 'l.id',
  },
  reply: {
    select: `json_build_object('lead_external_id', m.lead_id, 'channel', cv.channel, 'subject', m.subject, 'body', left(m.body, 20000),
               'sent_at', to_char(m.sent_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`,
    from: `inbox_messages m join conversations cv on cv.id = m.conversation_id where m.workspace_id = ? and m.kind = 'reply' and m.lead_id is not null`,
    changed: 'm.created_at',
    id: 'm.id',
  },
  meeting: {
    select: `json_build_object('lead_external_id', mt.lead_id, 'title', mt.title, 'status', mt.status, 'outcome', mt.outcome, 'location', mt.location,
               'starts_at', to_char(mt.starts_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'ends_at', to_char(mt.ends_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`,
    from: `meetings mt where mt.workspace_id = ?`,
    changed: 'mt.updated_at',
    id: 'mt.id',
  },
};

async function readSource(
  em: EntityManager,
  workspaceId: string,
  kind: PartnerRecordKind,
  q: { after?: { at: string; id: string } | null; ids?: string[]; limit: number },
): Promise<SourceRow[]> {
  const s = SOURCES[kind];
  const params: unknown[] = [workspaceId];
  let where = '';
  if (q.ids) {
    where = ` and ${s.id} = any(?::uuid[])`;
    params.push(`{${q.ids.join(',')}}`);
  } else if (q.after) {
    where = ` and (${s.changed}, ${s.id}) > (?::timestamptz, ?::uuid)`;
    params.push(q.after.at, q.after.id);
  }
  params.push(q.limit);
  return em.execute<SourceRow[]>(
    `select ${s.id} as id, ${s.changed}::text as changed_at, ${s.select} as fields from ${s.from}${where} order by ${s.changed}, ${s.id} limit ?`,
    params,
  );
}

const hashOf = (fields: Record<string, PartnerFieldValue>) =>
  createHash('sha256').update(JSON.stringify(fields)).digest('hex');

/** The hash of a row an adapter keeps an id in (its own kinds, or a record's id before its answer commits): never a version's. */
const ID_ONLY = '-';

/** partner_pushes.record_id of a key: our uuid, or a uuid derived from an adapter's key (a domain…). */
function keyId(kind: string, key: string): string {
  if (isUuid(key)) return key.toLowerCase();
  const h = createHash('sha256').update(`${kind}:${key}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The ids the partner gave, per integration (partner_pushes): our records' and the adapter's own kinds. */
export function partnerIdStore(em: EntityManager, integrationId: string): PartnerIdStore {
  return {
    async get(kind, keys) {
      const wanted = new Map([...new Set(keys)].map((k) => [keyId(kind, k), k]));
      if (!wanted.size) return new Map();
      const rows = await em.execute<{ record_id: string; partner_id: string | null }[]>(
        `select record_id, partner_id from partner_pushes where integration_id = ? and record_kind = ? and record_id = any(?::uuid[])`,
        [integrationId, kind, `{${[...wanted.keys()].join(',')}}`],
      );
      return new Map(rows.filter((r) => r.partner_id).map((r) => [wanted.get(r.record_id)!, r.partner_id!]));
    },
    async put(kind, ids) {
      if (!ids.size) return;
      await em.execute(
        `insert into partner_pushes (id, integration_id, record_kind, record_id, hash, partner_id, pushed_at)
         select gen_random_uuid(), ?, ?, p.record_id, ?, p.partner_id, now() from json_to_recordset(?::json) as p(record_id uuid, partner_id text)
         on conflict (integration_id, record_kind, record_id) do update set partner_id = excluded.partner_id`,
        [
          integrationId,
          kind,
          ID_ONLY,
          JSON.stringify([...ids].map(([k, partner_id]) => ({ record_id: keyId(kind, k), partner_id }))),
        ],
      );
    },
    async forget(kind, keys) {
      if (!keys.length) return;
      await em.execute(
        `delete from partner_pushes where integration_id = ? and record_kind = ? and record_id = any(?::uuid[])`,
        [integrationId, kind, `{${keys.map((k) => keyId(kind, k)).join(',')}}`],
      );
    },
  };
}

/** A session of calls for the integration: its token (refreshed when due), a forced refresh on a 401, its id store. */
export async function partnerSession(
  em: EntityManager,
  deps: PartnerSyncDeps,
  i: IIntegration,
): Promise<PartnerSession> {
  return {
    accountId: i.accountId ?? i.id,
    accessToken: await usablePartnerToken(em, deps, i),
    refresh: () => usablePartnerToken(em, deps, i, new Date(), { force: true }),
    ids: partnerIdStore(em, i.id),
  };
}

export interface SyncPageResult {
  /** No record of this kind left after the cursor (or nothing to do: `skipped` says why). */
  done: boolean;
  read: number;
  pushed: number;
  unchanged: number;
  held: number;
  skipped: string | null;
}

/** Records the partner's answers: pushes (hash, partner id) and pending events (one per record). */
async function recordResults(
  em: EntityManager,
  i: { id: string; workspaceId: string },
  kind: PartnerRecordKind,
  sent: { record: PartnerRecord; hash: string }[],
  results: PartnerResult[],
) {
  const pushes: { record_id: string; hash: string; partner_id: string }[] = [];
  const events: { id: string; record_id: string; kind: string; details: Record<string, unknown> }[] = [];
  results.forEach((r, n) => {
    const { hash, record } = sent[n];
    if (r.status === 'upserted' || r.status === 'unchanged')
      pushes.push({ record_id: record.externalId, hash, partner_id: r.partnerId });
    else if (r.status === 'conflict')
      events.push({
        id: uuidv7(),
        record_id: record.externalId,
        kind: 'field_conflict',
        details: { partner_id: r.partnerId, fields: r.conflicts },
      });
    else if (r.status === 'duplicate')
      events.push({
        id: uuidv7(),
        record_id: record.externalId,
        kind: 'possible_duplicate',
        details: { partner_id: r.candidate.partnerId, match: r.candidate.match, partner_record: r.candidate.fields },
      });
    else if (r.status === 'rejected')
      events.push({
        id: uuidv7(),
        record_id: record.externalId,
        kind: 'push_rejected',
        details: { reason: r.error.reason, message: r.error.message },
      });
  });
  if (pushes.length) {
    await em.execute(
      `insert into partner_pushes (id, integration_id, record_kind, record_id, hash, partner_id, pushed_at)
       select gen_random_uuid(), ?, ?, p.record_id, p.hash, p.partner_id, now() from json_to_recordset(?::json) as p(record_id uuid, hash text, partner_id text)
       on conflict (integration_id, record_kind, record_id) do update set hash = excluded.hash, partner_id = excluded.partner_id, pushed_at = excluded.pushed_at`,
      [i.id, kind, JSON.stringify(pushes)],
    );
  }
  if (events.length) {
    await em.execute(
      `insert into partner_events (id, workspace_id, integration_id, kind, record_kind, record_id, state, details, created_at, updated_at)
       select e.id, ?, ?, e.kind, ?, e.record_id, 'pending', e.details, now(), now()
         from json_to_recordset(?::json) as e(id uuid, record_id uuid, kind text, details jsonb)
       on conflict (integration_id, record_kind, record_id) where state = 'pending' do nothing`,
      [i.workspaceId, i.id, kind, JSON.stringify(events)],
    );
  }
  return {
    pushed: results.filter((r) => r.status === 'upserted').length,
    unchanged: results.filter((r) => r.status === 'unchanged').length,
    held: events.length,
  };
}

/**
 * One page of the sync of `kind`: the next `pageSize` records after the cursor; those whose current
 * version was not pushed yet (and that wait for no person) go to the partner; the answers and the
 * new cursor are committed together. Safe to repeat: a retried page re-sends at most what the
 * partner already upserted by our id, and only if the previous attempt did not commit.
 */
export async function syncPartnerPage(
  em: EntityManager,
  deps: PartnerSyncDeps,
  integrationId: string,
  kind: PartnerRecordKind,
  pageSize: number,
): Promise<SyncPageResult> {
  const idle = (skipped: string): SyncPageResult => ({
    done: true,
    read: 0,
    pushed: 0,
    unchanged: 0,
    held: 0,
    skipped,
  });
  const i = await em.findOne(Integration, { id: integrationId });
  if (!i || i.provider !== PARTNER) return idle('deleted');
  if (i.status !== 'active') return idle(i.status);
  const ws = i.workspace.id;
  const [cursor] = await em.execute<{ cursor_at: string | null; cursor_id: string | null }[]>(
    `select cursor_at::text as cursor_at, cursor_id from partner_sync_cursors where integration_id = ? and record_kind = ?`,
    [i.id, kind],
  );
  const rows = await readSource(em, ws, kind, {
    after: cursor?.cursor_at ? { at: cursor.cursor_at, id: cursor.cursor_id! } : null,
    limit: pageSize,
  });
  if (!rows.length) return { ...idle(''), skipped: null };
  const ids = rows.map((r) => r.id);
  const known = new Map(
    (
      await em.execute<{ record_id: string; hash: string }[]>(
        `select record_id, hash from partner_pushes where integration_id = ? and record_kind = ? and record_id = any(?::uuid[])`,
        [i.id, kind, `{${ids.join(',')}}`],
      )
    ).map((r) => [r.record_id, r.hash]),
  );
  const waiting = new Set(
    (
      await em.execute<{ record_id: string }[]>(
        `select record_id from partner_events where integration_id = ? and record_kind = ? and state = 'pending' and record_id = any(?::uuid[])`,
        [i.id, kind, `{${ids.join(',')}}`],
      )
    ).map((r) => r.record_id),
  );
  const sent = rows
    .map((r) => ({ record: { kind, externalId: r.id, fields: r.fields } as PartnerRecord, hash: hashOf(r.fields) }))
    .filter((s) => known.get(s.record.externalId) !== s.hash && !waiting.has(s.record.externalId));
  const results: PartnerResult[] = [];
  if (sent.length) {
    try {
      const session = await partnerSession(em, deps, i);
      for (let n = 0; n < sent.length; n += PARTNER_BATCH)
        results.push(
          ...(await deps.partner.upsert(
            session,
            sent.slice(n, n + PARTNER_BATCH).map((s) => s.record),
          )),
        );
    } catch (err) {
      if (err instanceof PartnerError && err.code === 'auth') await markPartnerRefused(em, i.id, err);
      throw err;
    }
  }
  const last = rows[rows.length - 1];
  const counts = await em.transactional(async (tx) => {
    const c = await recordResults(tx, { id: i.id, workspaceId: ws }, kind, sent, results);
    await tx.execute(
      `insert into partner_sync_cursors (id, integration_id, record_kind, cursor_at, cursor_id, pushed, updated_at) values (gen_random_uuid(), ?, ?, ?::timestamptz, ?, ?, now())
       on conflict (integration_id, record_kind) do update set cursor_at = excluded.cursor_at, cursor_id = excluded.cursor_id, pushed = partner_sync_cursors.pushed + excluded.pushed, updated_at = now()`,
      [i.id, kind, last.changed_at, last.id, c.pushed],
    );
    return c;
  });
  return { done: rows.length < pageSize, read: rows.length, ...counts, skipped: null };
}

/** The end of a sync run: when it finished. */
export async function finishPartnerSync(em: EntityManager, integrationId: string): Promise<void> {
  await em.execute(`update integrations set last_sync_at = now() where id = ? and provider = ?`, [
    integrationId,
    PARTNER,
  ]);
}

/** The active partner integrations (the sweep starts a sync for each). */
export async function activePartnerIntegrations(em: EntityManager): Promise<{ id: string; workspace_id: string }[]> {
  return em.execute(`select id, workspace_id from integrations where provider = ? and status = 'active' order by id`, [
    PARTNER,
  ]);
}

/** Where the sync of an integration stands: per kind, the cursor and pushes. */
export async function syncCursors(em: EntityManager, integrationId: string) {
  return em.execute<{ record_kind: string; cursor_at: Date | null; pushed: number; updated_at: Date }[]>(
    `select record_kind, cursor_at, pushed, updated_at from partner_sync_cursors where integration_id = ? order by record_kind`,
    [integrationId],
  );
}

// ---------------------------------------------------------------------------------------------
// Partner events

export async function listPartnerEvents(
  em: EntityManager,
  actor: Actor,
  q: PageRequest & { state?: string; kind?: string },
): Promise<IPartnerEvent[]> {
  const k = keyset(q);
  return em.find(
    PartnerEvent,
    {
      workspace: actor.workspaceId,
      ...(q.state ? { state: q.state } : {}),
      ...(q.kind ? { kind: q.kind } : {}),
      ...k.where,
    },
    k.options,
  );
}

export interface ConfirmInput {
  resolution: Resolution;
  /** merge: the value to keep for each conflicting field. */
  values?: Record<string, PartnerFieldValue>;
}

function resolveFor(e: IPartnerEvent, input: ConfirmInput): PartnerResolve | undefined {
  const details = e.details as { partner_id?: string; fields?: { field: string }[] };
  if (e.kind === 'push_rejected') {
    if (!(REJECTED_RESOLUTIONS as readonly string[]).includes(input.resolution))
      throw badRequest('invalid_resolution', `a rejected record is resolved with ${REJECTED_RESOLUTIONS.join(', ')}`);
    return undefined;
  }
  if (e.kind === 'field_conflict') {
    if (!(CONFLICT_RESOLUTIONS as readonly string[]).includes(input.resolution)) {
      throw badRequest('invalid_resolution', `a field conflict is resolved with ${CONFLICT_RESOLUTIONS.join(', ')}`);
    }
    if (input.resolution === 'merge') {
      const fields = (details.fields ?? []).map((f) => f.field);
      const missing = fields.filter((f) => !input.values || !(f in input.values));
      const extra = Object.keys(input.values ?? {}).filter((f) => !fields.includes(f));
      if (missing.length || extra.length)
        throw badRequest(
          'invalid_resolution',
          `merge needs values for exactly the conflicting fields: ${fields.join(', ')}`,
        );
    }
    return { mode: 'overwrite' };
  }
  if (!(DUPLICATE_RESOLUTIONS as readonly string[]).includes(input.resolution)) {
    throw badRequest('invalid_resolution', `a possible duplicate is resolved with ${DUPLICATE_RESOLUTIONS.join(', ')}`);
  }
  return input.resolution === 'link_existing'
    ? { mode: 'link', partnerId: String(details.partner_id) }
    : { mode: 'create' };
}

/**
 * Confirms a pending event with a resolution, once: keep_ours (our values overwrite the partner's),
 * keep_theirs (the partner's values are written to our contact, marked as edited by a person, then
 * pushed), merge (the given values, likewise), link_existing (our record becomes the partner's
 * existing one), keep_separate (a new record at the partner), retry (a rejected record, pushed as it
 * is now). The record is pushed with the resolution in the same transaction (502 and nothing changes
 * when the partner fails or refuses it). A second confirm is 409 `already_confirmed`.
 */
export async function confirmPartnerEvent(
  em: EntityManager,
  actor: Actor,
  deps: PartnerSyncDeps,
  eventId: string,
  input: ConfirmInput,
): Promise<{ event: IPartnerEvent; pushed: boolean; partnerId: string | null }> {
  assertWritable(actor);
  onlyManagers(actor);
  const e = await em.findOne(PartnerEvent, { id: eventId, workspace: actor.workspaceId });
  if (!e) throw notFound('partner event');
  if (e.state !== 'pending') throw conflict('already_confirmed', 'this partner event was confirmed already');
  const resolve = resolveFor(e, input);
  const integration = await em.findOneOrFail(Integration, { id: e.integration.id });
  if (integration.status !== 'active')
    throw conflict(
      'integration_not_active',
      `the partner integration is ${integration.status}: reinstall or enable it first`,
    );
  const kind = e.recordKind as PartnerRecordKind;
  const out = await em.transactional(async (tx) => {
    const [claimed] = await tx.execute<{ id: string }[]>(
      `update partner_events set state = 'confirmed', resolution = ?, confirmed_by_user_id = ?, confirmed_at = now(), updated_at = now() where id = ? and state = 'pending' returning id`,
      [input.resolution, actor.userId, e.id],
    );
    if (!claimed) throw conflict('already_confirmed', 'this partner event was confirmed already');
    if (kind === 'lead' && (input.resolution === 'keep_theirs' || input.resolution === 'merge')) {
      const details = e.details as { fields?: { field: string; theirs: PartnerFieldValue }[] };
      const values: Record<string, PartnerFieldValue> =
        input.resolution === 'merge'
          ? input.values!
          : Object.fromEntries((details.fields ?? []).map((f) => [f.field, f.theirs]));
      const cols = Object.keys(values).filter((f) => (WRITABLE_LEAD_FIELDS as readonly string[]).includes(f));
      if (cols.length) {
        // A person chose these values: marked edited, so enrichment never overwrites them.
        await tx.execute(
          `update contacts c set ${cols.map((col) => `"${col}" = ?`).join(', ')},
                  edited_fields = (select coalesce(jsonb_agg(distinct f), '[]'::jsonb) from jsonb_array_elements_text(c.edited_fields || ?::jsonb) f), updated_at = now()
             from leads l where l.id = ? and l.contact_id = c.id and c.workspace_id = ?`,
          [
            ...cols.map((col) => (values[col] === null ? null : String(values[col]))),
            JSON.stringify(cols.map(camel)),
            e.recordId,
            actor.workspaceId,
          ],
        );
      }
    }
    const [row] = await readSource(tx, actor.workspaceId, kind, { ids: [e.recordId], limit: 1 });
    if (!row) return { pushed: false, partnerId: null }; // the record was deleted meanwhile: nothing to push
    const record: PartnerRecord = { kind, externalId: row.id, fields: row.fields, ...(resolve ? { resolve } : {}) };
    let result: PartnerResult;
    try {
      [result] = await deps.partner.upsert(await partnerSession(tx, deps, integration), [record]);
    } catch (err) {
      if (err instanceof PartnerError)
        throw new AppError(502, 'provider_unavailable', `the partner CRM failed: ${err.message}`, {
          error_class: err.code,
          retryable: err.retryable,
        });
      throw err;
    }
    if (result.status !== 'upserted' && result.status !== 'unchanged')
      throw new AppError(
        502,
        'provider_unavailable',
        `the partner CRM did not accept the resolution (${result.status}${result.status === 'rejected' ? `: ${result.error.message}` : ''})`,
      );
    await recordResults(
      tx,
      { id: integration.id, workspaceId: actor.workspaceId },
      kind,
      [{ record, hash: hashOf(row.fields) }],
      [result],
    );
    return { pushed: result.status === 'upserted', partnerId: result.partnerId };
  });
  await em.refresh(e);
  return { event: e, ...out };
}

/** contacts column → the field name edited_fields uses (camelCase, like PATCH /api/leads/{id}). */
function camel(col: string): string {
  return col.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}
