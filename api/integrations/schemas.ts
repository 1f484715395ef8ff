import { z } from 'zod';
import type { IIntegration } from '../../db/entities/Integration.js';
import type { IPartnerEvent } from '../../db/entities/PartnerEvent.js';
import {
  GENERIC_KINDS,
  INTEGRATION_KINDS,
  INTEGRATION_STATUSES,
  maskedCredentials,
  PARTNER,
  type TestOutcome,
  type Verification,
} from '../../domain/integrations/integrations.js';
import { EVENT_KINDS, EVENT_STATES, RESOLUTIONS } from '../../domain/integrations/partner-sync.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { partnerWorkflowIds } from '../../lib/workflow-ids.js';
import { Timestamp, iso, text, urlPattern } from '../schemas.js';

const Url = z
  .string()
  .max(2048)
  .meta({
    pattern: urlPattern('https'),
    description:
      'The destination: an https URL with a public DNS host name (400 invalid_url or blocked_destination otherwise; hosts in OUTBOUND_ALLOW_HOSTS may use http and private addresses). Stored encrypted, shown masked.',
  });
const Secret = z
  .string()
  .min(8)
  .max(256)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
  .meta({
    description:
      'Optional signing secret: requests carry `X-Integration-Signature: sha256=<hex HMAC-SHA256 of the body>`. Stored encrypted, shown masked.',
  });
const GenericKind = z.enum(GENERIC_KINDS);
const Name = text({ min: 1, max: 200, trim: true });

export const ListQuery = z.object({ ...pageQuery, kind: z.enum(INTEGRATION_KINDS).optional() }).strict();

export const CreateBody = z
  .object({
    kind: z.enum(INTEGRATION_KINDS).meta({
      description:
        '`slack_webhook` or `json_webhook`; `partner` is installed through `POST /api/integrations/partner/install` (400 oauth_required)',
    }),
    name: Name,
    url: Url,
    secret: Secret.nullish(),
  })
  .strict();

export const UpdateBody = z
  .object({
    name: Name.optional(),
    enabled: z
      .boolean()
      .optional()
      .meta({ description: 'false: status `disabled` (no sync, no sends); true: back to `active`' }),
    url: Url.optional(),
    secret: Secret.nullable().optional().meta({ description: 'A new secret; null removes it' }),
  })
  .strict()
  .meta({ description: 'Every field is optional; an empty body changes nothing' });

export const VerifyBody = z.discriminatedUnion('kind', [
  z.object({ kind: GenericKind, url: Url, secret: Secret.nullish() }).strict(),
  z
    .object({
      kind: z.literal(PARTNER),
      access_token: z
        .string()
        .min(1)
        .max(4000)
        .regex(/^[\x21-\x7e]+$/),
    })
    .strict(),
]);

export const EventParams = z.object({ eventID: z.uuid() });
export const EventQuery = z
  .object({ ...pageQuery, state: z.enum(EVENT_STATES).optional(), kind: z.enum(EVENT_KINDS).optional() })
  .strict();

const FieldValue = z.union([z.string().max(20_000), z.number(), z.boolean(), z.null()]);
export const ConfirmBody = z
  .object({
    resolution: z.enum(RESOLUTIONS).meta({
      description:
        'field_conflict: `keep_ours`, `keep_theirs` or `merge` (with `values`); possible_duplicate: `link_existing` or `keep_separate`; push_rejected: `retry` (400 invalid_resolution otherwise)',
    }),
    values: z
      .record(z.string().max(100), FieldValue)
      .optional()
      .meta({ description: 'merge: the value to keep for each conflicting field (exactly those)' }),
  })
  .strict();

export const IntegrationView = z.object({
  id: z.uuid(),
  kind: z.string().meta({ description: '`partner`, `slack_webhook` or `json_webhook`' }),
  name: z.string(),
  status: z.string().meta({ enum: [...INTEGRATION_STATUSES] }),
  status_reason: z.string().nullable(),
  credentials: z
    .object({
      url: z.string().optional(),
      secret: z.string().nullable().optional(),
      access_token: z.string().optional(),
    })
    .meta({ description: 'Masked: never the stored values' }),
  account: z.object({ id: z.string(), name: z.string().nullable() }).nullable(),
  sync: z.object({ workflow_id: z.string(), last_sync_at: Timestamp.nullable() }).nullable(),
  last_verified_at: Timestamp.nullable(),
  last_tested_at: Timestamp.nullable(),
  last_test_ok: z.boolean().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const IntegrationPage = pageSchema(IntegrationView);

export function toIntegrationView(i: IIntegration): z.infer<typeof IntegrationView> {
  return {
    id: i.id,
    kind: i.provider,
    name: i.name,
    status: i.status,
    status_reason: i.statusReason ?? null,
    credentials: maskedCredentials(i),
    account: i.accountId ? { id: i.accountId, name: i.accountName ?? null } : null,
    sync:
      i.provider === PARTNER ? { workflow_id: partnerWorkflowIds.sync(i.id), last_sync_at: iso(i.lastSyncAt) } : null,
    last_verified_at: iso(i.lastVerifiedAt),
    last_tested_at: iso(i.lastTestedAt),
    last_test_ok: i.lastTestOk ?? null,
    created_at: i.createdAt.toISOString(),
    updated_at: i.updatedAt.toISOString(),
  };
}

export const VerifyView = z.object({
  valid: z.boolean(),
  status_code: z.number().int().nullable(),
  error_class: z.string().nullable(),
  error: z.string().nullable(),
  account: z.object({ id: z.string(), name: z.string().nullable() }).nullable(),
});
export const toVerifyView = (v: Verification): z.infer<typeof VerifyView> => ({
  valid: v.valid,
  status_code: v.statusCode,
  error_class: v.errorClass,
  error: v.error,
  account: v.account,
});

export const TestView = z.object({
  integration_id: z.uuid(),
  success: z.boolean(),
  status_code: z.number().int().nullable(),
  duration_ms: z.number().int(),
  error_class: z.string().nullable(),
  error: z.string().nullable(),
});
export const toTestView = (id: string, o: TestOutcome): z.infer<typeof TestView> => ({
  integration_id: id,
  success: o.success,
  status_code: o.statusCode,
  duration_ms: o.durationMs,
  error_class: o.errorClass,
  error: o.error,
});

export const DeleteView = z.object({
  id: z.uuid(),
  deleted: z.literal(true),
  detached_webhook_subscriptions: z.number().int(),
});

export const InstallView = z.object({
  authorization_url: z.string(),
  state: z.string(),
  redirect_uri: z.string(),
  expires_at: Timestamp,
});

export const PartnerEventView = z.object({
  id: z.uuid(),
  integration_id: z.uuid(),
  kind: z.string().meta({ enum: [...EVENT_KINDS] }),
  record_kind: z.string().meta({ enum: ['lead', 'reply', 'meeting'] }),
  record_id: z.uuid(),
  state: z.string().meta({ enum: [...EVENT_STATES] }),
  details: z.record(z.string(), z.unknown()),
  resolution: z.string().nullable(),
  confirmed_by: z.uuid().nullable(),
  confirmed_at: Timestamp.nullable(),
  created_at: Timestamp,
});
export const PartnerEventPage = pageSchema(PartnerEventView);
export const toPartnerEventView = (e: IPartnerEvent): z.infer<typeof PartnerEventView> => ({
  id: e.id,
  integration_id: e.integration.id,
  kind: e.kind,
  record_kind: e.recordKind,
  record_id: e.recordId,
  state: e.state,
  details: e.details,
  resolution: e.resolution ?? null,
  confirmed_by: e.confirmedByUserId ?? null,
  confirmed_at: iso(e.confirmedAt),
  created_at: e.createdAt.toISOString(),
});
export const ConfirmView = z.object({
  event: PartnerEventView,
  pushed: z.boolean(),
  partner_id: z.string().nullable(),
});
