import { z } from 'zod';
import type { IWebhookSubscription } from '../../db/entities/WebhookSubscription.js';
import { ACCEPTED_EVENTS } from '../../domain/webhook-events.js';
import { maskSecret } from '../../domain/webhooks.js';
import type { OutboundResult } from '../../lib/outbound-http.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { Timestamp } from '../schemas.js';

export const WebhookSubscriptionView = z.object({
  id: z.uuid(),
  url: z.string(),
  events: z.array(z.string()),
  active: z.boolean(),
  integration_id: z.uuid().nullable(),
  /** Masked (`whsec_****abcd`) everywhere except the creation response. */
  secret: z.string(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toWebhookSubscriptionView = (s: IWebhookSubscription, secret?: string): z.infer<typeof WebhookSubscriptionView> => ({
  id: s.id,
  url: s.url,
  events: [...s.events],
  active: s.active,
  integration_id: s.integration?.id ?? null,
  secret: secret ?? maskSecret(s.secretLast4),
  created_at: s.createdAt.toISOString(),
  updated_at: s.updatedAt.toISOString(),
});

export const WebhookSubscriptionPage = pageSchema(WebhookSubscriptionView);
export const ListWebhooksQuery = z.object(pageQuery);

// Event names are checked by the domain (400 invalid_event); shapes here (400 invalid_body).
const Url = z.string().trim().min(1).max(2048);
const Events = z.array(z.string().max(100)).max(ACCEPTED_EVENTS.length * 2);

export const CreateWebhookBody = z
  .object({ url: Url, events: Events, active: z.boolean().optional(), integration_id: z.uuid().nullish() })
  .strict();

export const UpdateWebhookBody = z
  .object({ url: Url.optional(), events: Events.optional(), active: z.boolean().optional() })
  .strict()
  .refine((b) => b.url !== undefined || b.events !== undefined || b.active !== undefined, { message: 'give at least one of url, events, active' });

export const DeletedView = z.object({ id: z.uuid(), deleted: z.literal(true) });

export const TestQuery = z.object({ event: z.string().max(100).optional() });
export const TestUrlBody = z.object({ url: Url, event: z.string().max(100).optional() }).strict();

export const TestResultView = z.object({
  success: z.boolean(),
  status_code: z.number().int().nullable(),
  duration_ms: z.number().int().nonnegative(),
  error: z.string().nullable(),
});
export const TestUrlResultView = TestResultView.extend({ secret: z.string() });

export const toTestResultView = (r: OutboundResult): z.infer<typeof TestResultView> => ({
  success: r.success,
  status_code: r.statusCode,
  duration_ms: r.durationMs,
  error: r.error,
});

const EnvelopeView = z.object({ event: z.string(), timestamp: Timestamp, data: z.record(z.string(), z.unknown()) });
export const SamplePayloadView = z.object({
  events: z.array(z.string()),
  samples: z.record(z.string(), EnvelopeView),
  test_event: EnvelopeView,
});
