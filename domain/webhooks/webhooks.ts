// Outbound webhook subscriptions and the one delivery function used by real events (activities)
// and by the test routes.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Integration } from '../../db/entities/Integration.js';
import { WebhookDelivery, type IWebhookDelivery } from '../../db/entities/WebhookDelivery.js';
import { WebhookSubscription, type IWebhookSubscription } from '../../db/entities/WebhookSubscription.js';
import { Workspace } from '../../db/entities/Workspace.js';
import type { Config } from '../../lib/config.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import { uuidv7, uuidv7Floor } from '../../lib/ids.js';
import { countWebhookDelivery } from '../../lib/metrics.js';
import {
  checkDestination,
  DestinationError,
  postGuarded,
  type OutboundResult,
  type Resolver,
} from '../../lib/outbound-http.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import { AppError, badRequest, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { envelopeJson, isAcceptedEvent, sampleData, TEST_EVENT, testEventData, ACCEPTED_EVENTS } from './events.js';
import { deliveryHeaders, newWebhookSecret, SECRET_PREFIX, webhookMessageId } from './signing.js';

// Existing importers (integrations, scripts, tests) keep importing these from here.
export { newWebhookSecret, SECRET_PREFIX, signatureHeader, WEBHOOK_DELIVERY_HEADERS } from './signing.js';
export const maskSecret = (last4: string) => `${SECRET_PREFIX}****${last4}`;

export const DELIVERY_TIMEOUT_MS = 10_000;

type Policy = Pick<Config, 'outboundAllowHosts'>;

function validateUrl(url: string, config: Policy): string {
  try {
    return checkDestination(url, { allowHosts: config.outboundAllowHosts }).url.toString();
  } catch (err) {
    if (err instanceof DestinationError) throw badRequest(err.code, err.message);
    throw err;
  }
}

/**
 * Whether a destination is on OUTBOUND_ALLOW_HOSTS (possibly an internal service: the delivery log
 * shows no excerpt of its answers). An unparsable URL is not (nothing was sent to it).
 */
function allowListed(url: string, config: Policy): boolean {
  try {
    return checkDestination(url, { allowHosts: config.outboundAllowHosts }).allowListed;
  } catch {
    return false;
  }
}

function validateEvents(events: string[]): string[] {
  if (events.length === 0) throw badRequest('invalid_event', 'events must list at least one event');
  const unknown = events.filter((e) => !isAcceptedEvent(e));
  if (unknown.length)
    throw badRequest(
      'invalid_event',
      `unknown or unsupported event name(s): ${unknown.join(', ')}; accepted: ${ACCEPTED_EVENTS.join(', ')}`,
    );
  if (new Set(events).size !== events.length) throw badRequest('invalid_event', 'events must not repeat a name');
  return events;
}

/** An event name given to a test route: one of the accepted names. */
export function validateEventName(name: string): string {
  if (!isAcceptedEvent(name))
    throw badRequest(
      'invalid_event',
      `unknown or unsupported event name: ${name}; accepted: ${ACCEPTED_EVENTS.join(', ')}`,
    );
  return name;
}

/** Demo workspaces send no external webhooks, so they cannot configure or test destinations. */
async function requireNotDemo(em: EntityManager, actor: Actor): Promise<void> {
  const ws = await em.findOneOrFail(Workspace, actor.workspaceId, { fields: ['isDemo'] });
  if (ws.isDemo) throw new AppError(403, 'demo_read_only', 'demo workspaces send no external webhooks');
}

async function requireSubscription(em: EntityManager, actor: Actor, id: string): Promise<IWebhookSubscription> {
  const sub = await em.findOne(WebhookSubscription, { id, workspace: actor.workspaceId });
  if (!sub) throw notFound('webhook subscription');
  return sub;
}

export async function listSubscriptions(
  em: EntityManager,
  actor: Actor,
  page: PageRequest,
): Promise<IWebhookSubscription[]> {
  const k = keyset(page);
  return em.find(WebhookSubscription, { workspace: actor.workspaceId, ...k.where }, k.options);
}

export async function createSubscription(
  em: EntityManager,
  actor: Actor,
  config: Pick<Config, 'outboundAllowHosts' | 'encryptionKey'>,
  input: { url: string; events: string[]; active?: boolean; integration_id?: string | null },
): Promise<{ subscription: IWebhookSubscription; secret: string }> {
  await requireNotDemo(em, actor);
  const url = validateUrl(input.url, config);
  const events = validateEvents(input.events);
  let integration = null;
  if (input.integration_id) {
    integration = await em.findOne(Integration, { id: input.integration_id, workspace: actor.workspaceId });
    if (!integration)
      throw badRequest('invalid_integration', 'integration_id must name an integration of this workspace');
  }
  const secret = newWebhookSecret();
  const subscription = em.create(WebhookSubscription, {
    workspace: em.getReference(Workspace, actor.workspaceId),
    integration,
    url,
    events,
    active: input.active ?? true,
    secretEncrypted: encrypt(secret, config.encryptionKey),
    secretLast4: secret.slice(-4),
  });
  await em.flush();
  return { subscription, secret };
}

/** Changes only url, events and active (a secret is replaced by `rotateSecret`, or a new subscription). */
export async function updateSubscription(
  em: EntityManager,
  actor: Actor,
  config: Policy,
  id: string,
  input: { url?: string; events?: string[]; active?: boolean },
): Promise<IWebhookSubscription> {
  const sub = await requireSubscription(em, actor, id);
  await requireNotDemo(em, actor);
  if (input.url !== undefined) sub.url = validateUrl(input.url, config);
  if (input.events !== undefined) sub.events = validateEvents(input.events);
  if (input.active !== undefined) sub.active = input.active;
  await em.flush();
  return sub;
}

/** The most seconds a rotated-out secret may keep signing (7 days); the default is a day. */
export const ROTATION_OVERLAP_MAX_SECONDS = 604_800;
export const ROTATION_OVERLAP_DEFAULT_SECONDS = 86_400;

export interface Rotation {
  subscription: IWebhookSubscription;
  /** The new secret, in full: shown once, by the rotation's response. */
  secret: string;
  rotatedAt: Date;
  /** Until when deliveries also carry a signature with the replaced secret; null without an overlap. */
  previousSecretExpiresAt: Date | null;
}

/**
 * POST /api/webhooks/outbound/{id}/rotate-secret (beyond the spec): a new secret, sealed like the first,
 * becomes the signing secret at once; with `overlapSeconds` > 0 the one it replaces is kept (sealed, as
 * it was) and signs beside it until the overlap ends (`deliveryHeaders`). A rotation while an overlap
 * still runs is refused (409 `rotation_in_progress`): it would drop a secret receivers may still
 * use. One conditional UPDATE, so two concurrent rotations cannot both pass that check.
 */
export async function rotateSecret(
  em: EntityManager,
  actor: Actor,
  config: Pick<Config, 'encryptionKey'>,
  id: string,
  overlapSeconds: number,
): Promise<Rotation> {
  if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > ROTATION_OVERLAP_MAX_SECONDS)
    throw badRequest('invalid_body', `overlap_seconds must be an integer from 0 to ${ROTATION_OVERLAP_MAX_SECONDS}`);
  const sub = await requireSubscription(em, actor, id);
  await requireNotDemo(em, actor);
  const secret = newWebhookSecret();
  const rotatedAt = new Date();
  const expiresAt = overlapSeconds > 0 ? new Date(rotatedAt.getTime() + overlapSeconds * 1000) : null;
  const updated = await em.getConnection().execute<{ id: string }[]>(
    `update webhook_subscriptions
        set previous_secret_encrypted = case when ?::timestamptz is null then null else secret_encrypted end,
            previous_secret_expires_at = ?::timestamptz, secret_encrypted = ?, secret_last4 = ?, updated_at = ?
      where id = ? and workspace_id = ? and (previous_secret_expires_at is null or previous_secret_expires_at <= ?)
      returning id`,
    [
      expiresAt,
      expiresAt,
      encrypt(secret, config.encryptionKey),
      secret.slice(-4),
      rotatedAt,
      sub.id,
      actor.workspaceId,
      rotatedAt,
    ],
  );
  if (!updated.length) {
    await em.refresh(sub);
    if (!sub.previousSecretExpiresAt) throw notFound('webhook subscription'); // deleted meanwhile
    throw new AppError(
      409,
      'rotation_in_progress',
      `the previous secret still signs deliveries until ${sub.previousSecretExpiresAt.toISOString()}; rotate again after that (or create a new subscription)`,
    );
  }
  await em.refresh(sub);
  return { subscription: sub, secret, rotatedAt, previousSecretExpiresAt: expiresAt };
}

/** The subscription's signing secrets at `at`: the current one, and the replaced one while its overlap lasts. */
export function signingSecrets(
  sub: IWebhookSubscription,
  encryptionKey: Buffer,
  at: Date,
): { secret: string; previousSecret?: string } {
  const secret = decrypt(sub.secretEncrypted, encryptionKey);
  const overlap =
    sub.previousSecretEncrypted && sub.previousSecretExpiresAt && sub.previousSecretExpiresAt.getTime() > at.getTime();
  return overlap ? { secret, previousSecret: decrypt(sub.previousSecretEncrypted!, encryptionKey) } : { secret };
}

export interface DeliveryFilter {
  success?: boolean;
  event?: string;
}

/**
 * GET /api/webhooks/outbound/{id}/deliveries (beyond the spec): the subscription's recorded attempts,
 * newest first (by id: a UUIDv7 minted when the attempt started), within the retention
 * (`WEBHOOK_HISTORY_DAYS`: older rows are hidden at once, and deleted by the daily maintenance job).
 */
export async function listDeliveries(
  em: EntityManager,
  actor: Actor,
  id: string,
  filter: DeliveryFilter,
  page: PageRequest,
  historyDays: number,
): Promise<IWebhookDelivery[]> {
  const sub = await requireSubscription(em, actor, id);
  const k = keyset(page, 'desc');
  const floor = uuidv7Floor(Date.now() - historyDays * 86_400_000);
  return em.find(
    WebhookDelivery,
    {
      subscriptionId: sub.id,
      workspaceId: actor.workspaceId,
      id: { $gte: floor, ...(page.after ? { $lt: page.after } : {}) },
      ...(filter.success === undefined ? {} : { success: filter.success }),
      ...(filter.event === undefined ? {} : { eventName: filter.event }),
    },
    k.options,
  );
}

export async function deleteSubscription(em: EntityManager, actor: Actor, id: string): Promise<void> {
  const sub = await requireSubscription(em, actor, id);
  await requireNotDemo(em, actor);
  await em.remove(sub).flush();
}

// ---------------------------------------------------------------------------------------------
// Delivery

export interface DeliveryEvent {
  /** Outbox id of a real event; null for test deliveries. */
  id: string | null;
  name: string;
  /** Exact envelope JSON bytes (signed and sent as is). */
  body: string;
}

export interface DeliveryDeps {
  config: Pick<Config, 'outboundAllowHosts' | 'encryptionKey'>;
  resolver?: Resolver;
  timeoutMs?: number;
}

/** One row of webhook_deliveries: one attempt to one subscription. */
export interface DeliveryRow {
  id: string;
  subscription_id: string;
  workspace_id: string;
  event_id: string | null;
  event_name: string;
  success: boolean;
  status_code: number | null;
  duration_ms: number;
  error_class: string | null;
  error: string | null;
  response_excerpt: string | null;
  /** Whether the delivery log may show the excerpt (not for an OUTBOUND_ALLOW_HOSTS destination). */
  response_excerpt_visible?: boolean;
  created_at: string;
}

/** Records an attempt; resolves once its row is committed. */
export type RecordDelivery = (row: DeliveryRow) => Promise<void>;

/**
 * Inserts attempts in one statement. A pair already recorded (subscription, event) keeps its first
 * row: only a retried activity racing its lost predecessor can produce one, and the first attempt is
 * the one that happened first.
 */
export async function insertDeliveries(em: EntityManager, rows: DeliveryRow[]): Promise<void> {
  if (!rows.length) return;
  await em.getConnection().execute(
    `insert into webhook_deliveries (id, subscription_id, workspace_id, event_id, event_name, success, status_code, duration_ms, error_class, error, response_excerpt, response_excerpt_visible, created_at)
     select id, subscription_id, workspace_id, event_id, event_name, success, status_code, duration_ms, error_class, error, response_excerpt,
            coalesce(response_excerpt_visible, false), created_at
       from json_to_recordset(?::json) as v(id uuid, subscription_id uuid, workspace_id uuid, event_id uuid, event_name text, success boolean, status_code int,
                                            duration_ms int, error_class text, error text, response_excerpt text, response_excerpt_visible boolean, created_at timestamptz)
     on conflict (subscription_id, event_id) do nothing`,
    [JSON.stringify(rows)],
  );
}

/**
 * Records attempts in groups: a row waits at most `maxWaitMs` (or until `maxRows` are waiting) and
 * goes in with the others in one insert. For a batch of deliveries: one statement per group instead
 * of one per attempt. The cost is in the rare crash: the attempts of the group not yet written are
 * made again by the retried activity, as new attempts with their own delivery ids (the spec promises
 * no exactly-once; docs/webhooks.md "Delivery semantics").
 */
export function groupedRecorder(
  em: EntityManager,
  opts: { maxRows?: number; maxWaitMs?: number } = {},
): RecordDelivery {
  const maxRows = opts.maxRows ?? 100;
  const maxWaitMs = opts.maxWaitMs ?? 50;
  let waiting: { row: DeliveryRow; done: (err?: unknown) => void }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const group = waiting;
    waiting = [];
    insertDeliveries(
      em,
      group.map((w) => w.row),
    ).then(
      () => group.forEach((w) => w.done()),
      (err: unknown) => group.forEach((w) => w.done(err)),
    );
  };
  return (row) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ row, done: (err) => (err === undefined ? resolve() : reject(err as Error)) });
      if (waiting.length >= maxRows) flush();
      else timer ??= setTimeout(flush, maxWaitMs);
    });
}

/**
 * One signed attempt (no retry), recorded in webhook_deliveries (at once, or by `record`). Never
 * throws for receiver failures.
 */
export async function deliverToSubscription(
  em: EntityManager,
  deps: DeliveryDeps,
  sub: IWebhookSubscription,
  event: DeliveryEvent,
  record: RecordDelivery = (row) => insertDeliveries(em, [row]),
): Promise<OutboundResult> {
  const at = new Date();
  const { secret, previousSecret } = signingSecrets(sub, deps.config.encryptionKey, at);
  // The attempt's own id (its webhook_deliveries row): a receiver can tell a new attempt after a
  // crash (the rare one whose record was lost) from the same request seen twice.
  const id = uuidv7();
  // webhook-id: per (event, subscription), so every attempt of a real event carries the same one; a
  // test delivery (no event) is its own message.
  const webhookId = webhookMessageId(event.id ?? id, sub.id);
  const result = await postGuarded(
    sub.url,
    event.body,
    deliveryHeaders({ secret, previousSecret, event: event.name, body: event.body, webhookId, deliveryId: id, at }),
    {
      allowHosts: deps.config.outboundAllowHosts,
      resolver: deps.resolver,
      timeoutMs: deps.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    },
  );
  await record({
    id,
    subscription_id: sub.id,
    workspace_id: sub.workspace.id,
    event_id: event.id,
    event_name: event.name,
    success: result.success,
    status_code: result.statusCode,
    duration_ms: result.durationMs,
    error_class: result.errorClass,
    error: result.error,
    response_excerpt: result.responseExcerpt,
    response_excerpt_visible: result.responseExcerpt !== null && !allowListed(sub.url, deps.config),
    created_at: new Date().toISOString(),
  });
  if (event.id) countWebhookDelivery(result); // outbox events only: a test delivery is not the service's traffic
  return result;
}

/**
 * POST /api/webhooks/outbound/{id}/test: sends the named event's sample (or the generic
 * `webhook.test` event) with the saved secret, synchronously through the same delivery function as
 * real events (the caller waits for the result, so no workflow is involved).
 */
export async function testSubscription(
  em: EntityManager,
  actor: Actor,
  deps: DeliveryDeps,
  id: string,
  eventName?: string,
): Promise<OutboundResult> {
  const name = eventName === undefined ? undefined : validateEventName(eventName);
  const sub = await requireSubscription(em, actor, id);
  await requireNotDemo(em, actor);
  const body = name ? envelopeJson(name, sampleData(name as never)) : envelopeJson(TEST_EVENT, testEventData(sub.id));
  return deliverToSubscription(em, deps, sub, { id: null, name: name ?? TEST_EVENT, body });
}

/** POST /api/webhooks/outbound/test-url: an unsaved destination, signed with a fresh temporary secret. */
export async function testUrl(
  em: EntityManager,
  actor: Actor,
  deps: DeliveryDeps,
  input: { url: string; event?: string },
): Promise<OutboundResult & { secret: string }> {
  const name = input.event === undefined ? undefined : validateEventName(input.event);
  const url = validateUrl(input.url, deps.config);
  await requireNotDemo(em, actor);
  const secret = newWebhookSecret();
  const eventName = name ?? TEST_EVENT;
  const body = name ? envelopeJson(name, sampleData(name as never)) : envelopeJson(TEST_EVENT, testEventData(null));
  const result = await postGuarded(
    url,
    body,
    deliveryHeaders({ secret, event: eventName, body, webhookId: webhookMessageId(uuidv7(), null) }),
    {
      allowHosts: deps.config.outboundAllowHosts,
      resolver: deps.resolver,
      timeoutMs: deps.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    },
  );
  return { ...result, secret };
}
