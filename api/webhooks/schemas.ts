import { z } from 'zod';
import type { IWebhookDelivery } from '../../db/entities/WebhookDelivery.js';
import type { IWebhookSubscription } from '../../db/entities/WebhookSubscription.js';
import { ACCEPTED_EVENTS, TEST_EVENT } from '../../domain/webhooks/events.js';
import {
  maskSecret,
  ROTATION_OVERLAP_DEFAULT_SECONDS,
  ROTATION_OVERLAP_MAX_SECONDS,
} from '../../domain/webhooks/webhooks.js';
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

// ---------------------------------------------------------------------------------------------
// Beyond the spec: the delivery log and secret rotation (docs/webhooks.md, "Delivery log" and
// "Rotating the secret").

const DELIVERY_EVENTS = [...ACCEPTED_EVENTS, TEST_EVENT] as const;

export const ListWebhookDeliveriesQuery = z
  .object({
    ...pageQuery,
    success: z
      .enum(['true', 'false'])
      .optional()
      .meta({ description: '`true`: only successful attempts (2xx); `false`: only failed ones' }),
    event: z.enum(DELIVERY_EVENTS).optional().meta({
      description: 'Only attempts of this event (`webhook.test`: the generic test event of POST …/{id}/test)',
    }),
  })
  .strict();

export const WebhookDeliveryView = z.object({
  id: z.uuid().meta({ description: 'The attempt (the `X-Service-Delivery` header it carried)' }),
  event_id: z
    .uuid()
    .nullable()
    .meta({ description: 'The outbox event delivered; null for a test delivery (POST …/{id}/test)' }),
  event: z.string().meta({ description: 'The event name (`webhook.test` for the generic test event)' }),
  delivered_at: Timestamp.meta({ description: 'When the attempt ended and was recorded' }),
  success: z.boolean().meta({ description: 'The receiver answered 2xx' }),
  status_code: z
    .number()
    .int()
    .nullable()
    .meta({ description: "The receiver's HTTP status; null when there was no HTTP answer" }),
  duration_ms: z.number().int().nonnegative(),
  error_class: z
    .enum(['timeout', 'blocked_destination', 'connection_error', 'http_status', 'invalid_url'])
    .nullable()
    .meta({ description: 'null on success' }),
  error: z.string().nullable(),
  response_excerpt: z.string().max(1024).nullable().meta({
    description:
      "The start of the receiver's answer (its first KiB, as UTF-8). null when it answered nothing, and always for destinations on the deployment's OUTBOUND_ALLOW_HOSTS (possibly internal services)",
  }),
});
export const WebhookDeliveryPage = pageSchema(WebhookDeliveryView);

type ErrorClass = z.infer<typeof WebhookDeliveryView>['error_class'];
export const toWebhookDeliveryView = (d: IWebhookDelivery): z.infer<typeof WebhookDeliveryView> => ({
  id: d.id,
  event_id: d.eventId ?? null,
  event: d.eventName,
  delivered_at: d.createdAt.toISOString(),
  success: d.success,
  status_code: d.statusCode ?? null,
  duration_ms: d.durationMs,
  error_class: (d.errorClass ?? null) as ErrorClass,
  error: d.error ?? null,
  response_excerpt: d.responseExcerptVisible && d.responseExcerpt ? d.responseExcerpt.slice(0, 1024) : null,
});

export const RotateWebhookSecretBody = z
  .object({
    overlap_seconds: z
      .number()
      .int()
      .min(0)
      .max(ROTATION_OVERLAP_MAX_SECONDS)
      .default(ROTATION_OVERLAP_DEFAULT_SECONDS)
      .meta({
        description:
          'How long the replaced secret keeps signing deliveries beside the new one (a second signature in `webhook-signature`); 0: replaced at once',
      }),
  })
  .strict();

export const WebhookSecretRotationView = z.object({
  id: z.uuid(),
  secret: z.string().meta({ description: 'The new signing secret, in full: shown only in this response' }),
  rotated_at: Timestamp,
  previous_secret_expires_at: Timestamp.nullable().meta({
    description: 'Until then deliveries carry a signature with the previous secret too; null: no overlap',
  }),
});
