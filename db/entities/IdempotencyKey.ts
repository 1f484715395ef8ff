import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { User } from './User.js';
import { Workspace } from './Workspace.js';

/** `in_flight`: the first request with the key is running; `done`: its 2xx answer is stored for replays. */
export const IDEMPOTENCY_STATES = ['in_flight', 'done'] as const;

// A client's Idempotency-Key (docs/idempotency.md; api/idempotency.ts, domain/idempotency/idempotency.ts):
// one per user, acting workspace and key, claimed atomically by the first request (insert … on conflict),
// then holding that request's 2xx answer (sealed: it may carry a secret shown once) for 24 hours.
// `owner` is the claim of the request that holds it; `locked_until` the lease of an in-flight claim,
// renewed while the request runs (a claim left by a crashed process can be taken over after it).
export const IdempotencyKey = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  indexes: [{ name: 'idempotency_keys_expires_at_index', properties: ['expiresAt'] }],
  properties: (p) => ({
    user: p.manyToOne(User).ref().primary().deleteRule('cascade'),
    workspace: p.manyToOne(Workspace).ref().primary().deleteRule('cascade').index(),
    key: p.string().length(255).primary(),
    operationId: p.string().length(120),
    /** SHA-256 (hex) of the method, the path, the query and the canonical body (api/idempotency.ts). */
    fingerprint: p.string().length(64),
    state: p.enum([...IDEMPOTENCY_STATES]),
    owner: p.uuid(),
    lockedUntil: p.datetime().nullable(),
    status: p.smallint().nullable(),
    /** The headers the handler answered with (replayed as they were). */
    headers: p.json<Record<string, string>>().nullable(),
    /** The answer's JSON body, AES-256-GCM-sealed with ENCRYPTION_KEY (null: no body). */
    body: p.text().nullable(),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
  }),
});
export type IIdempotencyKey = InferEntity<typeof IdempotencyKey>;
