// The Idempotency-Key rule (docs/idempotency.md), the one place that applies it, for every operation
// declared idempotent (api/operation.ts `idempotency`). The router calls it once the request is
// authenticated, authorized and valid, just before the handler:
//   - no key: the handler runs as always;
//   - a new key: claimed (domain/idempotency/idempotency.ts), the handler runs, a 2xx answer is stored
//     for 24 hours (its body sealed with ENCRYPTION_KEY), anything else releases the key;
//   - the same key and the same request (fingerprint) again: the stored answer, with
//     `Idempotent-Replayed: true`, and the handler does not run;
//   - the same key with another request: 422 idempotency_key_mismatch;
//   - the same key while its first request runs: 409 idempotency_key_in_flight.
import type { Context } from 'koa';
import { decrypt, encrypt, sha256Hex } from '../lib/crypto.js';
import { AppError } from '../domain/errors.js';
import type { Actor } from '../domain/identity.js';
import {
  claimKey,
  completeKey,
  IDEMPOTENCY_KEY_TTL_HOURS,
  IN_FLIGHT_LEASE_SECONDS,
  releaseKey,
  renewKey,
  type KeyScope,
} from '../domain/idempotency/idempotency.js';
import { reply, type Operation, type Reply } from './operation.js';
import type { Logger } from '../lib/logger.js';
import type { Services } from './services.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const IDEMPOTENCY_KEY_MAX = 255;
/**
 * 1–255 printable ASCII characters (space to `~`), neither first nor last a space: HTTP trims a header
 * value's edges, so such a key would not arrive as sent.
 */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$';
const KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);

export const INVALID_KEY = 'invalid_idempotency_key';
export const KEY_IN_FLIGHT = 'idempotency_key_in_flight';
export const KEY_MISMATCH = 'idempotency_key_mismatch';

const invalidKey = (message: string) =>
  new AppError(400, INVALID_KEY, `invalid Idempotency-Key: ${message}`, [{ path: IDEMPOTENCY_KEY_HEADER, message }]);

/** The request's key (undefined without one); 400 invalid_idempotency_key when malformed or sent twice. */
export function readIdempotencyKey(ctx: Context): string | undefined {
  const values = ctx.req.headersDistinct['idempotency-key'];
  if (!values) return undefined;
  if (values.length > 1) throw invalidKey('sent more than once');
  const key = values[0];
  if (key.length > IDEMPOTENCY_KEY_MAX) throw invalidKey(`at most ${IDEMPOTENCY_KEY_MAX} characters`);
  if (!KEY.test(key))
    throw invalidKey('1 or more printable ASCII characters (space to ~), not starting or ending with a space');
  return key;
}

/** JSON with object keys sorted at every depth: the same value always gives the same text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * What makes two requests "the same": the method, the path as sent (with its ids), the query and the
 * body as parsed JSON (key order and whitespace do not matter; a missing body is `{}`, as the router
 * reads it).
 */
export const requestFingerprintOf = (method: string, path: string, query: object, body: unknown): string =>
  sha256Hex(canonical([method, path, query, body]));
const requestFingerprint = (ctx: Context, body: unknown) =>
  requestFingerprintOf(ctx.method, ctx.path, { ...ctx.query }, body);

/** The answer the handler gave, as the router sends it (status, handler headers, JSON body or none). */
export interface Answer {
  reply: Reply;
  /** The body to send (null: none). */
  body: unknown;
}

/**
 * Runs `respond` (the handler and its answer's checks) under the request's Idempotency-Key, or answers
 * from the key. `respond` is the router's; what comes back is sent as usual (a replay carries
 * `Idempotent-Replayed: true`).
 */
export async function withIdempotencyKey(
  op: Operation,
  ctx: Context,
  services: Services,
  key: string,
  body: unknown,
  respond: () => Promise<Answer>,
): Promise<Answer> {
  const actor = ctx.state.actor as Actor;
  const scope: KeyScope = { userId: actor.userId, workspaceId: actor.workspaceId, key };
  const em = services.orm.em.fork();
  const claim = await claimKey(em, scope, requestFingerprint(ctx, body), op.operationId);
  if (claim.state === 'mismatch')
    throw new AppError(
      422,
      KEY_MISMATCH,
      `this Idempotency-Key was used in the last ${IDEMPOTENCY_KEY_TTL_HOURS} hours for another request (${claim.operationId === op.operationId ? 'another path, query or body' : claim.operationId}); use a new key for a new request`,
    );
  if (claim.state === 'in_flight')
    throw new AppError(
      409,
      KEY_IN_FLIGHT,
      'a request with this Idempotency-Key is still running; repeat it once that one has answered',
    );
  if (claim.state === 'done') {
    const replayed = claim.body === null ? null : JSON.parse(decrypt(claim.body, services.config.encryptionKey));
    return {
      reply: reply(claim.status, replayed, { ...claim.headers, [REPLAYED_HEADER]: 'true' }),
      body: replayed,
    };
  }
  // Claimed: this request runs. Its lease is renewed while it does, so a slow handler keeps the key.
  const { owner } = claim;
  const log: Logger = ctx.state.log;
  const renewal = setInterval(
    () =>
      void renewKey(em, scope, owner).catch((err: unknown) =>
        log.warn({ err, operation: op.operationId }, 'could not renew an Idempotency-Key lease'),
      ),
    (IN_FLIGHT_LEASE_SECONDS * 1000) / 3,
  );
  renewal.unref();
  let answer: Answer;
  try {
    answer = await respond();
  } catch (err) {
    clearInterval(renewal);
    await releaseKey(em, scope, owner).catch((e: unknown) =>
      log.warn({ err: e, operation: op.operationId }, 'could not release an Idempotency-Key'),
    );
    throw err;
  }
  clearInterval(renewal);
  const { status, headers } = answer.reply;
  try {
    if (status >= 200 && status < 300) {
      const sealed =
        answer.body === null || answer.body === undefined
          ? null
          : encrypt(JSON.stringify(answer.body), services.config.encryptionKey);
      await completeKey(em, scope, owner, { status, headers, body: sealed });
    } else await releaseKey(em, scope, owner);
  } catch (err) {
    // The work is done: answer it. Unstored, the key stays in flight until its lease runs out, and a
    // retry after that runs again (as one without a key would).
    log.error({ err, operation: op.operationId }, 'could not store the answer of an Idempotency-Key');
  }
  return answer;
}
