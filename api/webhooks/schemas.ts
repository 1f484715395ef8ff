import { z } from 'zod';
import type { IWebhookSubscription } from '../../db/entities/WebhookSubscription.js';
import { ACCEPTED_EVENTS } from '../../domain/webhooks/events.js';
import { maskSecret } from '../../domain/webhooks/webhooks.js';
import type { OutboundResult } from '../../lib/outbound-http.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { Timestamp, urlPattern } from '../schemas.js';
import { badRequest } from '../../domain/errors.js';
import { checkDestination, DestinationError } from '../../lib/outbound-http.js';

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

export const toWebhookSubscriptionView = (
  s: IWebhookSubscription,
  secret?: string,
): z.infer<typeof WebhookSubscriptionView> => ({
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

// Event names and destinations are checked by the domain (400 invalid_event, invalid_url,
// blocked_destination) and shapes here (400 invalid_body); the document states both.
const PUBLIC_HTTPS_URL = urlPattern('https');
const Url = z.string().max(2048).meta({
  pattern: PUBLIC_HTTPS_URL,
  description:
    'An https URL with a public DNS host name (400 invalid_url or blocked_destination otherwise). Hosts listed in the deployment setting OUTBOUND_ALLOW_HOSTS may also use http and private addresses.',
});
const EventName = z
  .string()
  .max(100)
  .meta({ enum: [...ACCEPTED_EVENTS] });
const Events = z
  .array(z.string().max(100))
  .max(ACCEPTED_EVENTS.length * 2)
  .meta({
    items: { type: 'string', enum: [...ACCEPTED_EVENTS] },
    minItems: 1,
    maxItems: ACCEPTED_EVENTS.length,
    uniqueItems: true,
  });

const publicHttpsUrl = new RegExp(PUBLIC_HTTPS_URL);
/**
 * The documented URL rule, before the domain's own checks: those keep their codes (invalid_url,
 * blocked_destination), and what they let through but the pattern refuses (IP literals, whitespace
 * the URL parser strips) is refused here as invalid_url.
 */
export function assertDocumentedUrl(url: string | undefined, allowHosts: readonly string[]): void {
  if (url === undefined) return;
  try {
    if (checkDestination(url, { allowHosts }).allowListed) return;
  } catch (err) {
    if (err instanceof DestinationError) throw badRequest(err.code, err.message);
    throw err;
  }
  if (!publicHttpsUrl.test(url)) throw badRequest('invalid_url', 'url must be https://<public DNS name>[:port][/path]');
}

export const CreateWebhookBody = z
  .object({ url: Url, events: Events, active: z.boolean().optional(), integration_id: z.uuid().nullish() })
  .strict();

export const UpdateWebhookBody = z
  .object({ url: Url.optional(), events: Events.optional(), active: z.boolean().optional() })
  .strict()
  .refine((b) => b.url !== undefined || b.events !== undefined || b.active !== undefined, {
    message: 'give at least one of url, events, active',
  })
  .meta({ minProperties: 1 });

export const DeletedView = z.object({ id: z.uuid(), deleted: z.literal(true) });

export const TestQuery = z.object({ event: EventName.optional() });
export const TestUrlBody = z.object({ url: Url, event: EventName.optional() }).strict();

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
