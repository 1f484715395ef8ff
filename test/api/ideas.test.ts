// The ideas board (docs/ideas-views-onboarding.md): shared by every workspace. What another
// workspace's people can see and do (read, vote; not edit or delete; nothing about the author), one
// vote per person under concurrency, idempotent unvote, both sorts with cursor pages, validation,
// the daily cap, and moderation is the admin CLI's (test/scripts/admin-announcements.test.ts).
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { IDEAS_PER_DAY } from '../../domain/ideas/ideas.js';
import { uuidv7 } from '../../lib/ids.js';
import { call, closeApi, createUser, type Res, type TestUser } from '../helpers/api.js';
import { em } from '../helpers/billing.js';
test.after.always(closeApi);

const as = (u: TestUser, body?: unknown) => ({ token: u.accessToken, body });
const post = (u: TestUser, title: string, body = '') => call('POST', '/api/ideas', as(u, { title, body }));

test('anyone posts; another workspace sees title, body, votes and times but nothing about the author; only the author edits or deletes (403 not_author)', async (t) => {
  const author = await createUser('Alice Author');
  const other = await createUser('Olga Other');
  const tag = randomUUID();
  const created = await post(author, `  Dark mode ${tag}  `, 'Please add a dark theme.');
  t.is(created.status, 201, created.text);
  t.like(created.body, {
    title: `Dark mode ${tag}`,
    body: 'Please add a dark theme.',
    vote_count: 0,
    voted: false,
    mine: true,
  });
  const id = created.body.id;

  const seen = (await call('GET', '/api/ideas?sort=recent&limit=200', as(other))).body.items.find(
    (i: { id: string }) => i.id === id,
  );
  t.deepEqual(Object.keys(seen).sort(), [
    'body',
    'created_at',
    'id',
    'mine',
    'title',
    'updated_at',
    'vote_count',
    'voted',
  ]);
  t.like(seen, { title: `Dark mode ${tag}`, mine: false, voted: false });
  const text = JSON.stringify(seen);
  for (const secret of [author.id, author.email, 'Alice']) t.false(text.includes(secret), secret);

  const edit = await call('PUT', `/api/ideas/${id}`, as(other, { title: 'Hijacked' }));
  t.is(edit.status, 403);
  t.is(edit.body.error.code, 'not_author');
  const del = await call('DELETE', `/api/ideas/${id}`, as(other));
  t.is(del.status, 403);
  t.is(del.body.error.code, 'not_author');

  const mine = await call('PUT', `/api/ideas/${id}`, as(author, { body: 'A dark theme, please, for late nights.' }));
  t.is(mine.status, 200, mine.text);
  t.like(mine.body, { title: `Dark mode ${tag}`, body: 'A dark theme, please, for late nights.' });
  t.true(Date.parse(mine.body.updated_at) >= Date.parse(created.body.updated_at));
  t.is((await call('PUT', `/api/ideas/${id}`, as(author, {}))).status, 400, 'nothing to change');
  t.is((await call('PUT', `/api/ideas/${uuidv7()}`, as(author, { title: 'x' }))).status, 404);

  // Another workspace can vote; the author sees the count but not who.
  t.like((await call('POST', `/api/ideas/${id}/vote`, as(other))).body, {
    vote_count: 1,
    voted: true,
    changed: true,
    mine: false,
  });
  t.like((await call('GET', `/api/ideas?sort=recent&mine=true`, as(author))).body.items[0], {
    id,
    vote_count: 1,
    voted: false,
    mine: true,
  });

  t.is((await call('DELETE', `/api/ideas/${id}`, as(author))).status, 204);
  t.is((await call('DELETE', `/api/ideas/${id}`, as(author))).status, 404);
  t.is((await call('POST', `/api/ideas/${id}/vote`, as(other))).status, 404);
  t.is((await call('DELETE', `/api/ideas/${id}/vote`, as(other))).status, 404);
  t.is(
    (
      (await (await em()).execute(`select count(*)::int as n from idea_votes where idea_id = ?`, [id])) as {
        n: number;
      }[]
    )[0].n,
    0,
    'its votes went with it',
  );
});

test('one vote per person: voting twice keeps one vote, unvote is idempotent, concurrent votes are all counted exactly', async (t) => {
  const author = await createUser();
  const id = (await post(author, `Bulk edit ${randomUUID()}`)).body.id;
  const fan = await createUser();
  const first = await call('POST', `/api/ideas/${id}/vote`, as(fan));
  t.like(first.body, { vote_count: 1, voted: true, changed: true });
  const second = await call('POST', `/api/ideas/${id}/vote`, as(fan));
  t.is(second.status, 200);
  t.like(second.body, { vote_count: 1, voted: true, changed: false });

  // The same person ten times at once, and twenty people at once.
  const same = await Promise.all(Array.from({ length: 10 }, () => call('POST', `/api/ideas/${id}/vote`, as(author))));
  t.true(same.every((r) => r.status === 200));
  t.is(same.filter((r) => r.body.changed).length, 1);
  const crowd = await Promise.all(Array.from({ length: 20 }, () => createUser()));
  await Promise.all(crowd.map((u) => call('POST', `/api/ideas/${id}/vote`, as(u))));
  const rows = (
    (await (await em()).execute(`select count(*)::int as n from idea_votes where idea_id = ?`, [id])) as { n: number }[]
  )[0].n;
  const idea = (await call('POST', `/api/ideas/${id}/vote`, as(fan))).body;
  t.is(idea.vote_count, 22);
  t.is(rows, 22, 'the count equals the vote rows');

  const un = await call('DELETE', `/api/ideas/${id}/vote`, as(fan));
  t.like(un.body, { vote_count: 21, voted: false, changed: true });
  t.like((await call('DELETE', `/api/ideas/${id}/vote`, as(fan))).body, {
    vote_count: 21,
    voted: false,
    changed: false,
  });
  // Concurrent unvotes and votes of the crowd leave the count equal to the rows.
  await Promise.all(
    crowd.flatMap((u, i) =>
      i % 2
        ? [call('DELETE', `/api/ideas/${id}/vote`, as(u)), call('DELETE', `/api/ideas/${id}/vote`, as(u))]
        : [call('POST', `/api/ideas/${id}/vote`, as(u))],
    ),
  );
  const [check] = (await (
    await em()
  ).execute(
    `select vote_count, (select count(*)::int from idea_votes v where v.idea_id = i.id) as n from ideas i where id = ?`,
    [id],
  )) as { vote_count: number; n: number }[];
  t.is(check.vote_count, check.n);
  t.is(check.n, 11);
  t.is((await call('POST', '/api/ideas/not-a-uuid/vote', as(fan))).body.error.code, 'invalid_id');
});

test('votes racing the idea’s deletion answer 200 or 404, never 409 (the vote holds the idea while it inserts)', async (t) => {
  const author = await createUser();
  const crowd = await Promise.all(Array.from({ length: 6 }, () => createUser()));
  for (let round = 0; round < 5; round++) {
    const id = (await post(author, `Racing ${randomUUID()}`)).body.id;
    const [del, ...votes] = await Promise.all([
      call('DELETE', `/api/ideas/${id}`, as(author)),
      ...crowd.map((u) => call('POST', `/api/ideas/${id}/vote`, as(u))),
    ]);
    t.is(del.status, 204, del.text);
    for (const v of votes) t.true(v.status === 200 || v.status === 404, `round ${round}: ${v.status} ${v.text}`);
  }
});

test('sorted by votes (ties newest first) or by recency, with cursor pages; a cursor of the other sort is 400', async (t) => {
  const u = await createUser();
  const tag = randomUUID();
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push((await post(u, `Sort ${tag} ${i}`)).body.id);
  // votes: idea 1 → 3 votes, idea 3 → 1 vote; 0 and 2 → none.
  const voters = await Promise.all([createUser(), createUser(), createUser()]);
  for (const v of voters) await call('POST', `/api/ideas/${ids[1]}/vote`, as(v));
  await call('POST', `/api/ideas/${ids[3]}/vote`, as(voters[0]));
  // Other tests post too: walk every page and keep ours, in order.
  const walk = async (sort: string) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: Res = await call(
        'GET',
        `/api/ideas?sort=${sort}&mine=true&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        as(u),
      );
      t.is(r.status, 200, r.text);
      seen.push(...r.body.items.map((i: { id: string }) => i.id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    return seen;
  };
  t.deepEqual(await walk('votes'), [ids[1], ids[3], ids[2], ids[0]]);
  t.deepEqual(await walk('recent'), [ids[3], ids[2], ids[1], ids[0]]);
  const votesCursor = (await call('GET', '/api/ideas?sort=votes&limit=1', as(u))).body.next_cursor;
  t.truthy(votesCursor);
  const wrong = await call('GET', `/api/ideas?sort=recent&cursor=${votesCursor}`, as(u));
  t.is(wrong.status, 400);
  t.is(wrong.body.error.code, 'invalid_query');
  for (const q of ['?sort=top', '?cursor=!!', '?limit=500', '?mine=yes'])
    t.is((await call('GET', `/api/ideas${q}`, as(u))).status, 400, q);
  // Every workspace sees the whole board: another user walking the board finds these ideas too.
  const other = await createUser();
  const board = (await call('GET', '/api/ideas?sort=recent&limit=200', as(other))).body.items.map(
    (i: { id: string }) => i.id,
  );
  t.true(ids.every((id) => board.includes(id)));
});

test('validation: title 1–200 characters after trimming, body up to 5,000; unknown fields refused', async (t) => {
  const u = await createUser();
  for (const body of [
    {},
    { title: '   ' },
    { title: 'x'.repeat(201) },
    { title: 'ok', body: 'y'.repeat(5001) },
    { title: 'ok', extra: true },
    { title: 3 },
  ]) {
    const r = await call('POST', '/api/ideas', as(u, body));
    t.is(r.status, 400, JSON.stringify(body).slice(0, 50));
    t.is(r.body.error.code, 'invalid_body');
  }
  t.is((await call('POST', '/api/ideas', as(u, { title: 'x'.repeat(200) }))).status, 201);
});

test(`at most ${IDEAS_PER_DAY} ideas per person in 24 hours: 429 idea_limit_reached`, async (t) => {
  const u = await createUser();
  const e = await em();
  for (let i = 0; i < IDEAS_PER_DAY - 1; i++) {
    await e.execute(
      `insert into ideas (id, author_id, title, body, vote_count, created_at, updated_at) values (?, ?, ?, '', 0, now(), now())`,
      [uuidv7(), u.id, `Seeded ${i}`],
    );
  }
  t.is((await post(u, 'The last one today')).status, 201);
  const over = await post(u, 'One too many');
  t.is(over.status, 429);
  t.is(over.body.error.code, 'idea_limit_reached');
  t.truthy(over.headers.get('retry-after'));
  await e.execute(`update ideas set created_at = now() - interval '25 hours' where author_id = ?`, [u.id]);
  t.is((await post(u, 'A new day')).status, 201);
});
