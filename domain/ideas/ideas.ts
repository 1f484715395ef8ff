// The ideas board (docs/ideas-views-onboarding.md): feature requests shared by every workspace.
//
// An idea belongs to the person who posted it, not to a workspace. Everyone signed in sees every
// idea's title, body, vote count, times, whether they voted for it and whether they wrote it;
// nobody sees who else wrote or voted for one (no name, email, user or workspace id). Only the
// author edits or deletes (403 `not_author` for anyone else: the idea is visible to them, so a 404
// would be untrue). One vote per person: the vote is a row keyed (idea, user), and the count on the
// idea moves in the same statement that inserts or deletes that row, so concurrent votes always
// leave `vote_count` equal to the rows.
import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7 } from '../../lib/ids.js';
import { AppError, notFound } from '../errors.js';
import type { Actor } from '../identity.js';

export const IDEA_TITLE_MAX = 200;
export const IDEA_BODY_MAX = 5000;
/** Ideas one person may post in any 24 hours (429 `idea_limit_reached` above): a shared board needs a bound. */
export const IDEAS_PER_DAY = 20;

export const IDEA_SORTS = ['votes', 'recent'] as const;
export type IdeaSort = (typeof IDEA_SORTS)[number];

export interface IdeaRow {
  id: string;
  title: string;
  body: string;
  vote_count: number;
  voted: boolean;
  mine: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Where the next page starts: after (votes, id) when sorted by votes, after id when by recency. */
export type IdeaCursor = { sort: 'votes'; votes: number; id: string } | { sort: 'recent'; id: string };

const COLUMNS = (userParam = '?') => `i.id, i.title, i.body, i.vote_count, i.created_at, i.updated_at,
  exists (select 1 from idea_votes v where v.idea_id = i.id and v.user_id = ${userParam}) as voted,
  coalesce(i.author_id = ${userParam}, false) as mine`;

/**
 * One page of the board: most voted first (ties: newest first), or newest first. `mine`: only the
 * caller's ideas. A page costs one index scan plus one vote probe per row.
 */
export async function listIdeas(
  em: EntityManager,
  actor: Pick<Actor, 'userId'>,
  q: { sort: IdeaSort; limit: number; cursor?: IdeaCursor; mine?: boolean },
): Promise<IdeaRow[]> {
  const params: unknown[] = [actor.userId, actor.userId];
  const where: string[] = [];
  if (q.mine) {
    where.push('i.author_id = ?');
    params.push(actor.userId);
  }
  if (q.cursor) {
    if (q.cursor.sort === 'votes') {
      where.push('(i.vote_count, i.id) < (?, ?)');
      params.push(q.cursor.votes, q.cursor.id);
    } else {
      where.push('i.id < ?');
      params.push(q.cursor.id);
    }
  }
  params.push(q.limit + 1);
  return em.execute<IdeaRow[]>(
    `select ${COLUMNS()} from ideas i ${where.length ? `where ${where.join(' and ')}` : ''}
      order by ${q.sort === 'votes' ? 'i.vote_count desc, i.id desc' : 'i.id desc'} limit ?`,
    params,
  );
}

async function readIdea(em: EntityManager, userId: string, id: string): Promise<IdeaRow> {
  const [row] = await em.execute<IdeaRow[]>(`select ${COLUMNS()} from ideas i where i.id = ?`, [userId, userId, id]);
  if (!row) throw notFound('idea');
  return row;
}

export const getIdea = (em: EntityManager, actor: Pick<Actor, 'userId'>, id: string) => readIdea(em, actor.userId, id);

/** Posts an idea (429 `idea_limit_reached` past IDEAS_PER_DAY in 24 hours, counted under a per-user lock). */
export async function createIdea(
  em: EntityManager,
  actor: Pick<Actor, 'userId'>,
  input: { title: string; body: string },
): Promise<IdeaRow> {
  const id = uuidv7();
  await em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`ideas:${actor.userId}`]);
    const [{ n }] = await tx.execute<{ n: number }[]>(
      `select count(*)::int as n from ideas where author_id = ? and created_at > now() - interval '24 hours'`,
      [actor.userId],
    );
    if (n >= IDEAS_PER_DAY) {
      throw new AppError(429, 'idea_limit_reached', `at most ${IDEAS_PER_DAY} ideas in 24 hours`, undefined, {
        'Retry-After': '3600',
      });
    }
    await tx.execute(
      `insert into ideas (id, author_id, title, body, vote_count, created_at, updated_at) values (?, ?, ?, ?, 0, now(), now())`,
      [id, actor.userId, input.title, input.body],
    );
  });
  return readIdea(em, actor.userId, id);
}

/** The idea, locked, for a change by its author: 404 when it does not exist, 403 `not_author` for anyone else. */
async function lockOwn(tx: EntityManager, userId: string, id: string): Promise<void> {
  const [row] = await tx.execute<{ author_id: string | null }[]>(
    `select author_id from ideas where id = ? for update`,
    [id],
  );
  if (!row) throw notFound('idea');
  if (row.author_id !== userId)
    throw new AppError(403, 'not_author', 'only the author of an idea can change or delete it');
}

/** Replaces the title and/or body of the caller's idea (votes stay). */
export async function updateIdea(
  em: EntityManager,
  actor: Pick<Actor, 'userId'>,
  id: string,
  change: { title?: string; body?: string },
): Promise<IdeaRow> {
  await em.transactional(async (tx) => {
    await lockOwn(tx, actor.userId, id);
    await tx.execute(
      `update ideas set title = coalesce(?, title), body = coalesce(?, body), updated_at = now() where id = ?`,
      [change.title ?? null, change.body ?? null, id],
    );
  });
  return readIdea(em, actor.userId, id);
}

/** Deletes the caller's idea and its votes. */
export async function deleteIdea(em: EntityManager, actor: Pick<Actor, 'userId'>, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    await lockOwn(tx, actor.userId, id);
    await tx.execute(`delete from ideas where id = ?`, [id]);
  });
}

/**
 * Votes for an idea (idempotent: a second vote changes nothing). One statement: the vote row is
 * inserted unless it exists, and the count grows by the rows inserted. `changed` says whether this
 * call added the vote. `for key share` holds the idea against a concurrent delete: one that commits first
 * leaves nothing to vote for (404), where the vote's foreign key would have failed (a 409 found by a
 * two-worker Schemathesis run).
 */
export async function vote(
  em: EntityManager,
  actor: Pick<Actor, 'userId'>,
  id: string,
): Promise<{ idea: IdeaRow; changed: boolean }> {
  const [r] = await em.execute<{ changed: number }[]>(
    `with v as (insert into idea_votes (idea_id, user_id, created_at) select id, ?, now() from ideas where id = ? for key share on conflict do nothing returning idea_id),
          u as (update ideas set vote_count = vote_count + 1 where id in (select idea_id from v) returning id)
     select (select count(*) from u)::int as changed`,
    [actor.userId, id],
  );
  return { idea: await readIdea(em, actor.userId, id), changed: r.changed > 0 };
}

/** Withdraws the caller's vote (idempotent: nothing to withdraw changes nothing). */
export async function unvote(
  em: EntityManager,
  actor: Pick<Actor, 'userId'>,
  id: string,
): Promise<{ idea: IdeaRow; changed: boolean }> {
  const [r] = await em.execute<{ changed: number }[]>(
    `with v as (delete from idea_votes where idea_id = ? and user_id = ? returning idea_id),
          u as (update ideas set vote_count = vote_count - 1 where id in (select idea_id from v) returning id)
     select (select count(*) from u)::int as changed`,
    [id, actor.userId],
  );
  return { idea: await readIdea(em, actor.userId, id), changed: r.changed > 0 };
}

/** Support staff's moderation (`npm run admin -- remove-idea`): deletes any idea. */
export async function removeIdea(em: EntityManager, id: string): Promise<{ title: string } | null> {
  const [row] = await em.execute<{ title: string }[]>(`delete from ideas where id = ? returning title`, [id]);
  return row ?? null;
}
