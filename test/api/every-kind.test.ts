// Every resource kind of domain/access.ts, on one real row each (test/helpers/every-kind.ts): the
// owner passes; a member given only P2 is refused P1's rows of product kinds (403 not_assigned),
// passes workspace-level kinds, and cannot see the owner's `own` rows (404); a member given P1 would
// pass (the rows are P1's); a user of another workspace gets 404 not_found for every kind. A kind
// added to RESOLVE without a fixture fails here.
import test from 'ava';
import { authorizeIds, KINDS, OWN_KINDS, PRODUCT_KINDS, type Kind } from '../../domain/access.js';
import { AppError } from '../../domain/errors.js';
import type { Actor } from '../../domain/identity.js';
import { resolveActor } from '../../domain/workspaces.js';
import { closeApi } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { seedEveryKind } from '../helpers/every-kind.js';
import { createOwnerWithProducts } from '../helpers/scope.js';
test.after.always(closeApi);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let ids: Record<Kind, string>;
let actors: { owner: Actor; member: Actor; p1Member: Actor; stranger: Actor };

test.before(async () => {
  const [f, other] = await Promise.all([createOwnerWithProducts(), createOwner()]);
  const e = await em();
  const [seeded, owner, member, stranger] = await Promise.all([
    seedEveryKind(f),
    resolveActor(e as never, { userId: f.owner.id, kind: 'session' }, undefined),
    // The member acts in the owner's workspace (X-Acting-As: the owner's user id).
    resolveActor(e as never, { userId: f.member.id, kind: 'session' }, f.owner.id),
    resolveActor(e as never, { userId: other.id, kind: 'session' }, undefined),
  ]);
  if (member.workspaceId !== owner.workspaceId || member.allApps || member.appIds.join() !== f.p2.appId)
    throw new Error(`unexpected member actor ${JSON.stringify(member)}`);
  ids = seeded;
  // The same member had they been given P1 only: the rows of product kinds are P1's.
  actors = { owner, member, p1Member: { ...member, appIds: [f.p1.appId] }, stranger };
});

const check = async (actor: Actor, kind: Kind) => authorizeIds(await em(), actor, kind, [ids[kind]]);

async function refused(
  t: import('ava').ExecutionContext,
  actor: Actor,
  kind: Kind,
  status: number,
  code: string,
  who: string,
) {
  const err = await t.throwsAsync(
    check(actor, kind),
    { instanceOf: AppError },
    `${who}: ${kind} should be ${status} ${code}`,
  );
  if (err) t.like(err, { status, code }, `${who}: ${kind}`);
}

test('the fixture has a row of every kind, and the own kinds are not product kinds', (t) => {
  t.deepEqual(Object.keys(ids).sort(), [...KINDS].sort());
  for (const kind of KINDS) t.regex(ids[kind] ?? '', UUID, `no fixture id for ${kind}`);
  t.true(OWN_KINDS.length >= 5);
  for (const kind of OWN_KINDS) t.false(PRODUCT_KINDS.includes(kind), kind);
});

for (const kind of KINDS) {
  const product = PRODUCT_KINDS.includes(kind);
  const own = OWN_KINDS.includes(kind);
  const expectation = product
    ? 'P2-only member 403 not_assigned'
    : own
      ? 'member 404 (another user’s)'
      : 'member passes';
  test(`${kind}: owner passes, ${expectation}, another workspace 404`, async (t) => {
    t.regex(ids[kind] ?? '', UUID, `no fixture id for ${kind}`);
    await t.notThrowsAsync(check(actors.owner, kind), `owner: ${kind}`);
    if (product) {
      await refused(t, actors.member, kind, 403, 'not_assigned', 'P2-only member');
      await t.notThrowsAsync(check(actors.p1Member, kind), `P1 member: ${kind} is P1’s`);
    } else if (own) {
      await refused(t, actors.member, kind, 404, 'not_found', 'member');
      await refused(t, actors.p1Member, kind, 404, 'not_found', 'P1 member');
    } else {
      await t.notThrowsAsync(check(actors.member, kind), `member: ${kind}`);
    }
    await refused(t, actors.stranger, kind, 404, 'not_found', 'another workspace');
  });
}
