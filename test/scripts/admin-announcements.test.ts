// The support CLI's announcement and moderation commands (docs/notifications.md): announce,
// announcements, unpublish, remove-idea — run as support staff would, against the tests' database.
import test from 'ava';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { repoRoot } from '../../lib/config.js';
import { call, closeApi, createUser } from '../helpers/api.js';
import { createOwner } from '../helpers/billing.js';
test.after.always(closeApi);

function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(repoRoot, 'scripts/admin.ts'), ...args],
      { cwd: repoRoot, env: process.env },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

const idOf = (stdout: string) => /announcement ([0-9a-f-]{36})/.exec(stdout)?.[1];

test('announce publishes for the given plans and window; announcements lists it with counts; unpublish takes it down at once', async (t) => {
  const free = await createUser();
  const pro = await createOwner();
  const title = `Launch week ${randomUUID().slice(0, 8)}`;
  const r = await admin(
    'announce',
    '--title',
    title,
    '--body',
    'Five new features.',
    '--cta-label',
    'See them',
    '--cta-url',
    'https://example.com/launch',
    '--plans',
    'pro',
    '--ends-at',
    new Date(Date.now() + 86_400_000).toISOString(),
    '--by',
    'support@example.com',
  );
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /: live for pro, from /);
  const id = idOf(r.stdout)!;
  t.truthy(id);
  const proView = (await call('GET', '/api/me/announcements?limit=200', { token: pro.accessToken })).body.items.find(
    (a: { id: string }) => a.id === id,
  );
  t.like(proView, {
    title,
    body: 'Five new features.',
    cta: { label: 'See them', url: 'https://example.com/launch' },
    plans: ['pro'],
  });
  t.falsy(
    (await call('GET', '/api/me/announcements?limit=200', { token: free.accessToken })).body.items.find(
      (a: { id: string }) => a.id === id,
    ),
  );

  await call('POST', `/api/me/announcements/${id}/cta-click`, { token: pro.accessToken });
  const listed = await admin('announcements');
  t.is(listed.code, 0, listed.stderr);
  const line = listed.stdout.split('\n').find((l) => l.startsWith(id))!;
  t.regex(line, /live .* plans: pro {2}dismissed: 0 {2}cta clicks: 1/);

  const un = await admin('unpublish', '--id', id);
  t.is(un.code, 0, un.stderr);
  t.regex(un.stdout, /unpublished/);
  t.regex((await admin('unpublish', '--id', id)).stdout, /was already unpublished/);
  t.is((await call('POST', `/api/me/announcements/${id}/dismiss`, { token: pro.accessToken })).status, 404);
  t.false((await admin('announcements')).stdout.includes(id), 'only live and scheduled ones by default');
  t.regex(
    (await admin('announcements', '--all')).stdout.split('\n').find((l) => l.startsWith(id)) ?? '',
    /unpublished/,
  );

  const scheduled = await admin(
    'announce',
    '--title',
    'Next month',
    '--body',
    'Soon.',
    '--starts-at',
    new Date(Date.now() + 30 * 86_400_000).toISOString(),
  );
  t.regex(scheduled.stdout, /: scheduled for every plan/);
});

test('remove-idea deletes any idea with its votes (moderation of the shared board)', async (t) => {
  const u = await createUser();
  const idea = (await call('POST', '/api/ideas', { token: u.accessToken, body: { title: 'Spam spam spam' } })).body;
  const r = await admin('remove-idea', '--id', idea.id);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /removed with its votes/);
  t.is((await call('PUT', `/api/ideas/${idea.id}`, { token: u.accessToken, body: { title: 'x' } })).status, 404);
  const again = await admin('remove-idea', '--id', idea.id);
  t.is(again.code, 1);
  t.regex(again.stderr, /no idea/);
});

test('failures: usage errors exit 2, bad content exits 1, nothing is published', async (t) => {
  const cases: [string[], number, RegExp][] = [
    [['announce', '--body', 'x'], 2, /--title is required/],
    [['announce', '--title', 'x'], 2, /--body is required/],
    [['announce', '--title', 'x', '--body', 'y', '--starts-at', 'tomorrow'], 2, /--starts-at must be an ISO 8601/],
    [['announce', '--title', 'x', '--body', 'y', '--colour', 'red'], 2, /Unknown option '--colour'/],
    [['announce', '--title', 'x', '--body', 'y', '--plans', 'gold'], 1, /unknown plan "gold"/],
    [['announce', '--title', 'x', '--body', 'y', '--cta-label', 'Go'], 1, /needs both a label and a URL/],
    [
      ['announce', '--title', 'x', '--body', 'y', '--cta-label', 'Go', '--cta-url', 'http://example.com'],
      1,
      /must be https/,
    ],
    [
      ['announce', '--title', 'x', '--body', 'y', '--ends-at', '2020-01-01T00:00:00Z'],
      1,
      /ends_at is in the past|ends_at must be after/,
    ],
    [['unpublish'], 2, /--id is required/],
    [['unpublish', '--id', 'nope'], 2, /--id must be a UUID/],
    [['unpublish', '--id', randomUUID()], 1, /no announcement/],
  ];
  for (const [args, code, re] of cases) {
    const r = await admin(...args);
    t.is(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, re, args.join(' '));
  }
  t.regex((await admin('help')).stdout, /announce --title T --body B/);
});
