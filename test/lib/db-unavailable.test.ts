// db/orm.ts isDatabaseUnavailable: which failures mean "PostgreSQL is down or restarting, retry
// shortly" (503 unavailable in api/middleware/errors.ts) and which stay what they were. The shapes
// are those node-postgres, knex and MikroORM produce (seen against a real server in
// test/api/dependency-down.test.ts).
import test from 'ava';
import { ConnectionException, DriverException, UniqueConstraintViolationException } from '@mikro-orm/core';
import { isDatabaseUnavailable } from '../../db/orm.js';

const coded = (message: string, code: string) => Object.assign(new Error(message), { code });

test('a restart, a refused or reset connection, a session that ended and an exhausted pool are unavailability', (t) => {
  const cases: [string, unknown][] = [
    [
      '57P01 admin shutdown (fast shutdown, terminated session)',
      coded('terminating connection due to administrator command', '57P01'),
    ],
    ['57P02 crash shutdown', coded('terminating connection because of crash of another server process', '57P02')],
    ['57P03 cannot connect now', coded('the database system is starting up', '57P03')],
    ['class 08 connection exception', coded('connection failure', '08006')],
    ['53300 too many connections', coded('sorry, too many clients already', '53300')],
    ['refused (raw, from em.execute)', coded('connect ECONNREFUSED 127.0.0.1:54329', 'ECONNREFUSED')],
    [
      'refused (wrapped by MikroORM)',
      new DriverException(coded('connect ECONNREFUSED 127.0.0.1:54329', 'ECONNREFUSED')),
    ],
    ['reset', coded('read ECONNRESET', 'ECONNRESET')],
    [
      'ended under a query (wrapped, the statement first)',
      new DriverException(new Error('select 1 - Connection terminated unexpectedly')),
    ],
    ['ended under a query (raw)', new Error('Connection terminated unexpectedly')],
    ['a client that already failed', new Error('Client has encountered a connection error and is not queryable')],
    [
      'no pooled connection in time (knex)',
      Object.assign(
        new Error(
          'Knex: Timeout acquiring a connection. The pool is probably full. Are you missing a .transacting(trx) call?',
        ),
        { name: 'KnexTimeoutError' },
      ),
    ],
    [
      'no pooled connection in time (wrapped)',
      new DriverException(new Error('Knex: Timeout acquiring a connection. The pool is probably full.')),
    ],
    ['MikroORM ConnectionException', new ConnectionException(new Error('connection lost'))],
    [
      'in the cause',
      new Error('loading failed', { cause: coded('terminating connection due to administrator command', '57P01') }),
    ],
    [
      'each address of localhost refused',
      new AggregateError([
        coded('connect ECONNREFUSED ::1:54329', 'ECONNREFUSED'),
        coded('connect ECONNREFUSED 127.0.0.1:54329', 'ECONNREFUSED'),
      ]),
    ],
  ];
  for (const [what, err] of cases) t.true(isDatabaseUnavailable(err), what);
});

test('a statement the server refused, and anything else, is not', (t) => {
  const cases: [string, unknown][] = [
    [
      'unique violation',
      new UniqueConstraintViolationException(coded('duplicate key value violates unique constraint', '23505')),
    ],
    ['invalid text representation', coded('invalid input syntax for type uuid', '22P02')],
    ['undefined table', coded('relation "nope" does not exist', '42P01')],
    ['statement timeout (the query, not the server)', coded('canceling statement due to statement timeout', '57014')],
    ['serialization failure', coded('could not serialize access', '40001')],
    ['a plain error', new Error('something else')],
    ['a message merely mentioning a connection', new Error('the Connection terminated unexpectedly field is required')],
    ['not an error', 'Connection terminated unexpectedly'],
    ['nothing', undefined],
  ];
  for (const [what, err] of cases) t.false(isDatabaseUnavailable(err), what);
});
