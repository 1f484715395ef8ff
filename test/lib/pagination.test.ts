// The keyset builders of lib/pagination.ts, without services: the em.find fragments (`keyset`,
// `keysetBy`) and the SQL tail (`keysetSql`) for ascending and descending lists, the first page
// (no cursor condition), `limit + 1` rows, and a walk through a whole list with `page()` and the
// cursor it hands out, which must visit every row once and in order.
import test from 'ava';
import { z } from 'zod';
import { keyset, keysetBy, keysetSql, page, pageQuery } from '../../lib/pagination.js';

const ID = '01890a5d-ac96-774b-bcce-b302099a8057';
const AT = new Date('2026-03-01T10:00:00.000Z');

test('keyset: the first page has no id condition and asks for limit + 1 rows, ascending by default', (t) => {
  t.deepEqual(keyset({ limit: 10 }), { where: {}, options: { orderBy: { id: 'asc' }, limit: 11 } });
  t.deepEqual(keyset({ limit: 1 }, 'desc'), { where: {}, options: { orderBy: { id: 'desc' }, limit: 2 } });
});

test('keyset: after a cursor, id > after ascending and id < after descending', (t) => {
  t.deepEqual(keyset({ limit: 50, after: ID }, 'asc'), {
    where: { id: { $gt: ID } },
    options: { orderBy: { id: 'asc' }, limit: 51 },
  });
  t.deepEqual(keyset({ limit: 50, after: ID }, 'desc'), {
    where: { id: { $lt: ID } },
    options: { orderBy: { id: 'desc' }, limit: 51 },
  });
  // An empty cursor is the first page, as `if (page.after)` always meant.
  t.deepEqual(keyset({ limit: 5, after: '' }).where, {});
});

test('keysetBy: (time, id) order, strictly after the cursor, in either direction', (t) => {
  t.deepEqual(keysetBy('dueAt', { limit: 20 }), {
    where: {},
    options: { orderBy: { dueAt: 'asc', id: 'asc' }, limit: 21 },
  });
  const asc = keysetBy('dueAt', { limit: 20, after: { at: AT, id: ID } });
  t.deepEqual(asc.where, { $or: [{ dueAt: { $gt: AT } }, { dueAt: AT, id: { $gt: ID } }] });
  // The time orders first, then the id (the key order of orderBy is the ORDER BY order).
  t.deepEqual(Object.entries(asc.options.orderBy), [
    ['dueAt', 'asc'],
    ['id', 'asc'],
  ]);
  const desc = keysetBy('startsAt', { limit: 3, after: { at: AT, id: ID } }, 'desc');
  t.deepEqual(desc, {
    where: { $or: [{ startsAt: { $lt: AT } }, { startsAt: AT, id: { $lt: ID } }] },
    options: { orderBy: { startsAt: 'desc', id: 'desc' }, limit: 4 },
  });
});

test('keysetSql: one column, the condition and its value only after a cursor, then order and limit + 1', (t) => {
  t.deepEqual(keysetSql({ limit: 10 }, 'c.id'), { sql: ' order by c.id limit ?', params: [11] });
  t.deepEqual(keysetSql({ limit: 10, after: ID }, 'c.id'), {
    sql: ' and c.id > ? order by c.id limit ?',
    params: [ID, 11],
  });
  t.deepEqual(keysetSql({ limit: 10, after: ID }, 'id', 'desc'), {
    sql: ' and id < ? order by id desc limit ?',
    params: [ID, 11],
  });
  t.deepEqual(keysetSql({ limit: 10 }, 'id', 'desc'), { sql: ' order by id desc limit ?', params: [11] });
});

test('keysetSql: (time, id) columns compare as a row, both ordered the same way', (t) => {
  t.deepEqual(keysetSql({ limit: 25 }, ['r.due_at', 'r.id']), {
    sql: ' order by r.due_at, r.id limit ?',
    params: [26],
  });
  t.deepEqual(keysetSql({ limit: 25, after: { at: AT, id: ID } }, ['r.due_at', 'r.id']), {
    sql: ' and (r.due_at, r.id) > (?, ?) order by r.due_at, r.id limit ?',
    params: [AT, ID, 26],
  });
  t.deepEqual(keysetSql({ limit: 25, after: { at: AT, id: ID } }, ['c.last_message_at', 'c.id'], 'desc'), {
    sql: ' and (c.last_message_at, c.id) < (?, ?) order by c.last_message_at desc, c.id desc limit ?',
    params: [AT, ID, 26],
  });
});

/** What em.find does with a `keyset()` query over `rows`, in memory. */
function find(rows: { id: string }[], q: ReturnType<typeof keyset>) {
  const cond = q.where.id;
  const kept = rows.filter((r) => !cond || ('$gt' in cond ? r.id > cond.$gt : r.id < cond.$lt));
  const sorted = [...kept].sort((a, b) => (a.id < b.id ? -1 : 1) * (q.options.orderBy.id === 'asc' ? 1 : -1));
  return sorted.slice(0, q.options.limit);
}

for (const order of ['asc', 'desc'] as const) {
  test(`keyset + page(): walking a ${order} list through its cursors visits every row once, in order`, (t) => {
    const ids = Array.from({ length: 23 }, (_, n) => `01890a5d-ac96-774b-bcce-${n.toString(16).padStart(12, '0')}`);
    const rows = [...ids].reverse().map((id) => ({ id }));
    const cursor = z.object(pageQuery);
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const p = page(find(rows, keyset({ limit: 5, after }, order)), 5, (r) => r.id);
      seen.push(...p.items);
      pages += 1;
      after = p.next_cursor === null ? undefined : cursor.parse({ limit: '5', cursor: p.next_cursor }).cursor;
      if (p.next_cursor !== null) t.is(after, p.items.at(-1));
    } while (after && pages < 10);
    t.is(pages, 5);
    t.deepEqual(seen, order === 'asc' ? ids : [...ids].reverse());
  });
}
