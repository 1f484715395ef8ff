// What the benchmarks set up through the domain (not the HTTP API): a fresh account on the pro plan
// with one product, acting as its owner.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createAccount } from '../domain/auth.js';
import { createApp } from '../domain/apps.js';
import { setPlan } from '../domain/plans.js';
import { ownActor } from '../domain/workspaces.js';

export async function benchOwner(em: EntityManager) {
  const user = createAccount(em, { email: `bench-${randomUUID()}@example.test`, name: 'Bench', passwordHash: 'x' });
  await em.flush();
  const actor = await ownActor(em, { userId: user.id, kind: 'session' });
  await setPlan(em, actor.workspaceId, 'pro');
  const app = await createApp(em, actor, { name: 'Bench product' });
  return { actor, app };
}
