// Threading headers of the composed message (lib/connectors/mailbox/compose.ts, docs/email.md "What
// we send and why"): In-Reply-To is the message answered (the last reference), References the chain
// oldest first, each id once, bounded to the thread's first and its latest MAX_REFERENCES.
import test from 'ava';
import { simpleParser } from 'mailparser';
import { composeMessage, MAX_REFERENCES, referencesOf } from '../../lib/connectors/mailbox/compose.js';

const id = (n: number) => `<m${n}@example.test>`;

test('referencesOf: the chain as given, each once, the answered message last; the thread id alone without one', (t) => {
  t.deepEqual(referencesOf({ references: [id(1), id(2), id(3)] }), [id(1), id(2), id(3)]);
  t.deepEqual(referencesOf({ references: [id(1), id(2), id(1), id(3), id(2)] }), [id(1), id(3), id(2)]);
  t.deepEqual(referencesOf({ references: ['not an id', id(1)] }), [id(1)]);
  t.deepEqual(referencesOf({ references: [], threadId: id(9) }), [id(9)]);
  t.deepEqual(referencesOf({ threadId: 'thread-1' }), []);
});

test('referencesOf: a long chain keeps the thread’s first id and the latest ones', (t) => {
  const chain = Array.from({ length: 50 }, (_, i) => id(i));
  const refs = referencesOf({ references: chain });
  t.is(refs.length, MAX_REFERENCES);
  t.is(refs[0], id(0));
  t.deepEqual(refs.slice(1), chain.slice(50 - (MAX_REFERENCES - 1)));
});

test('composeMessage: In-Reply-To the answered message, References the chain, "Re: " the subject', async (t) => {
  const composed = await composeMessage(
    { address: 'ana@acme.test', name: 'Ana' },
    { idempotencyKey: 'k1', to: 'grace@prospect.test', subject: 'Hello', body: 'Hi', references: [id(1), id(2)] },
    new Date('2026-11-20T10:00:00Z'),
  );
  const m = await simpleParser(composed.raw);
  t.is(m.inReplyTo, id(2));
  t.deepEqual(m.references, [id(1), id(2)]);
  t.is(m.subject, 'Re: Hello');
  t.is(composed.threadId, id(1));
});
