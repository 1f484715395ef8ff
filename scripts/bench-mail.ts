// `npm run bench:mail`: real email through the local mail server (GreenMail, scripts/stack/mail.ts).
//
// 1. Sends: `BENCH_MESSAGES` (1,000) campaign emails from `BENCH_ACCOUNTS` (4) mailboxes, each sent by
//    the mail connector as the executor sends it (Message-ID from the action id, List-Unsubscribe,
//    pooled SMTP per account, a copy appended to Sent), all accounts at once. Prints sends/s per
//    account and in total.
// 2. Replies: `BENCH_REPLIES` (200) prospects answer in the thread (In-Reply-To), paced at
//    `BENCH_REPLY_RATE`/s (20); each is picked up by its account's `mailbox-sync` workflow (IMAP IDLE)
//    in the worker, matched to its send, and leaves as `message.received` to a local receiver. Prints
//    the p50/p95 from the reply landing in the mailbox (the SMTP server's acceptance) to the receiver's
//    POST, against the goal (p95 ≤ 5 s).
//
// Production layout: `npm run build` first (skip with --no-build); the worker with its outbox
// dispatcher runs `dist/workers/worker.js` in a process of its own. Own database
// (`outreach_bench_mail`) and Redis database 6.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import nodemailer from 'nodemailer';
import {
  benchOwner,
  benchStack,
  dropBenchOwner,
  seedCampaign,
  seedEnrollments,
  seedLeads,
  spawnBuilt,
  workerPolling,
} from './bench-fixtures.js';
import { stopChild, waitFor } from './children.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1000);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 4);
const REPLIES = Math.min(MESSAGES, Number(process.env.BENCH_REPLIES ?? 200));
const REPLY_RATE = Number(process.env.BENCH_REPLY_RATE ?? 20);
const TAG = `m${process.pid}`;

const { stack, env, taskQueue, log } = await benchStack(
  'mail',
  { suffix: process.env.BENCH_DB_SUFFIX ?? 'bench_mail', redisDb: 6 },
  {
    build: true,
    dispatcher: true,
    mail: true,
    env: {
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      JWT_SECRET: randomBytes(32).toString('base64url'),
      ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
    },
  },
);
const mail = stack.mail!;

const { createServices } = await import('../api/services-factory.js');
const { createList } = await import('../domain/lists/lists.js');
const { createSubscription } = await import('../domain/webhooks/webhooks.js');
const { encrypt } = await import('../lib/crypto.js');
const { uuidv7 } = await import('../lib/ids.js');
const { mailConnectorAccountId } = await import('../lib/connectors/mailbox/account.js');

const worker = spawnBuilt('dist/workers/worker.js', env);
const services = await createServices();
await workerPolling(services.temporal.connection, taskQueue, 120_000);

// The receiver: arrival time of each message.received, by the bench key in the reply's text.
const arrivals = new Map<string, number>();
let duplicates = 0;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = performance.now();
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { event: string; data: { message: string } };
      const key = /bench-key (\S+)/.exec(body.data.message)?.[1];
      if (body.event === 'message.received' && key) {
        if (arrivals.has(key)) duplicates++;
        else arrivals.set(key, at);
      }
    } catch {
      /* not ours */
    }
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));

const pct = (xs: number[], p: number) =>
  xs.length ? xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : NaN;
async function mailbox(address: string, password: string) {
  const res = await fetch(`${mail.apiUrl}/api/user`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: address, login: address, password }),
  });
  if (!res.ok) throw new Error(`GreenMail refused ${address}: ${res.status} ${await res.text()}`);
}

let benchUser: string | undefined;
const lines: string[] = [];
const smtp = nodemailer.createTransport({
  host: mail.host,
  port: mail.smtpPort,
  secure: false,
  ignoreTLS: true,
  pool: true,
  maxConnections: 4,
});
try {
  const em = services.orm.em.fork() as EntityManager;
  const { actor, app } = await benchOwner(em);
  benchUser = actor.userId;
  const ws = actor.workspaceId;
  await createSubscription(em, actor, services.config, {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    events: ['message.received'],
  });
  const list = await createList(em, actor, app.id, { name: 'Bench mail list' });

  // Sender mailboxes on the server, connected as mail-connector accounts.
  const accounts = Array.from({ length: ACCOUNTS }, (_, i) => ({
    id: uuidv7(),
    address: `sender${i}.${TAG}@bench.test`,
  }));
  for (const a of accounts) {
    await mailbox(a.address, 'bench-pw');
    const credentials = {
      email: a.address,
      username: a.address,
      password: 'bench-pw',
      smtp_host: mail.host,
      smtp_port: String(mail.smtpPort),
      smtp_security: 'none',
      imap_host: mail.host,
      imap_port: String(mail.imapPort),
      imap_security: 'none',
    };
    await em.execute(
      `insert into platform_accounts (id, workspace_id, channel, display_name, time_zone, working_hours, status, connector, connector_account_id, address, credentials_sealed, caps,
         min_gap_seconds, jitter_seconds, connected_at, warmup_skipped_at, created_at, updated_at)
       values (?, ?, 'email', 'Bench sender', 'UTC', '{"days":[1,2,3,4,5,6,7],"start":"00:00","end":"24:00"}'::jsonb, 'connected', 'mail', ?, ?, ?, '{}'::jsonb, 0, 0, now(), now(), now(), now())`,
      [
        a.id,
        ws,
        mailConnectorAccountId(a.id),
        a.address,
        encrypt(JSON.stringify(credentials), services.config.encryptionKey),
      ],
    );
  }
  log(`seeding ${MESSAGES} leads and their planned emails on ${ACCOUNTS} accounts`);
  await seedLeads(em, { workspaceId: ws, listId: list.id, count: MESSAGES, tag: TAG });
  const { campaignId } = await seedCampaign(em, {
    workspaceId: ws,
    appId: app.id,
    name: 'Bench mail',
    accountIds: accounts.map((a) => a.id),
  });
  await seedEnrollments(em, { workspaceId: ws, campaignId, listId: list.id });
  const planned = await em.execute<{ id: string; recipient: string; account_id: string }[]>(
    `insert into scheduled_actions (id, workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_position, step_version, type, state, due_at, account_id, content, attempts, created_at, updated_at)
     select gen_random_uuid(), ?, ?, e.id, e.lead_id, gen_random_uuid(), 0, 1, 'email', 'executing', now(), (?::uuid[])[(row_number() over (order by c.email) - 1) % ? + 1],
            jsonb_build_object('recipient', c.email, 'subject', 'Hello ' || c.first_name, 'body', 'Hi ' || c.first_name || ', a short note from the mail bench.'), 1, now(), now()
       from enrollments e join contacts c on c.id = e.contact_id where e.campaign_id = ?
     returning id, content->>'recipient' as recipient, account_id`,
    [ws, campaignId, `{${accounts.map((a) => a.id).join(',')}}`, ACCOUNTS, campaignId],
  );
  const accountOf = new Map(planned.map((p) => [p.id, p.account_id]));
  const byAccount = new Map<string, { id: string; recipient: string }[]>();
  for (const p of planned) byAccount.set(p.account_id, [...(byAccount.get(p.account_id) ?? []), p]);

  // 1. Sends: every account at once, each as fast as its pool takes them (2 connections, 2 in flight).
  log(`sending ${MESSAGES} emails`);
  const sent = new Map<string, { messageId: string; threadId: string }>();
  const perAccount: { account: number; sent: number; seconds: number; per_second: number }[] = [];
  const t0 = performance.now();
  await Promise.all(
    accounts.map(async (a, i) => {
      const todo = [...(byAccount.get(a.id) ?? [])];
      const start = performance.now();
      const lane = async () => {
        for (let job = todo.shift(); job; job = todo.shift()) {
          const r = await services.connector.sendEmail(mailConnectorAccountId(a.id), {
            idempotencyKey: job.id,
            to: job.recipient,
            subject: 'Hello from the bench',
            body: 'Hi, a short note from the mail bench.',
            unsubscribeUrl: `${services.config.publicBaseUrl}/unsubscribe/bench`,
          });
          sent.set(job.id, { messageId: r.messageId, threadId: r.threadId });
        }
      };
      await Promise.all([lane(), lane()]);
      const seconds = (performance.now() - start) / 1000;
      const n = byAccount.get(a.id)?.length ?? 0;
      perAccount.push({
        account: i,
        sent: n,
        seconds: Math.round(seconds * 100) / 100,
        per_second: Math.round((n / seconds) * 10) / 10,
      });
    }),
  );
  const sendSeconds = (performance.now() - t0) / 1000;
  const rows = [...sent.entries()].map(([id, s]) => ({ id, message_id: s.messageId, thread_id: s.threadId }));
  await em.execute(
    `update scheduled_actions a set state = 'executed', executed_at = now(), connector_message_id = v.message_id, connector_thread_id = v.thread_id
       from json_to_recordset(?::json) as v(id uuid, message_id text, thread_id text) where a.id = v.id`,
    [JSON.stringify(rows)],
  );
  const sendSummary = {
    messages: sent.size,
    seconds: Math.round(sendSeconds * 100) / 100,
    per_second: Math.round((sent.size / sendSeconds) * 10) / 10,
    per_account: perAccount.sort((x, y) => x.account - y.account),
  };
  console.log(JSON.stringify({ phase: 'send', ...sendSummary }));
  lines.push(
    `send: ${sendSummary.messages} emails in ${sendSummary.seconds} s = ${sendSummary.per_second}/s in total; per account ${perAccount.map((p) => `${p.per_second}/s`).join(', ')}`,
  );

  // 2. Replies: each account's mailbox sync follows its INBOX from now on.
  for (const a of accounts) await services.jobs.start('mailbox-sync', { accountId: a.id, workspaceId: ws });
  await waitFor(
    'every mailbox sync to have its cursor',
    async () => {
      const [r] = await em.execute<{ n: string }[]>(
        `select count(*) as n from mailbox_cursors where account_id in (?) and uid_validity is not null`,
        [accounts.map((a) => a.id)],
      );
      return Number(r.n) === ACCOUNTS;
    },
    120_000,
  );
  log(`${REPLIES} replies at ${REPLY_RATE}/s`);
  const landed = new Map<string, number>();
  const targets = planned.slice(0, REPLIES);
  const started = performance.now();
  await Promise.all(
    targets.map(async (p, k) => {
      const due = started + (k * 1000) / REPLY_RATE;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      const s = sent.get(p.id)!;
      const to = accounts.find((a) => a.id === accountOf.get(p.id))!.address;
      await smtp.sendMail({
        from: p.recipient,
        to,
        subject: 'Re: Hello from the bench',
        text: `Sounds good. bench-key ${p.id}`,
        inReplyTo: s.messageId,
        references: [s.messageId],
      });
      landed.set(p.id, performance.now());
    }),
  );
  const deadline = performance.now() + 120_000;
  while (arrivals.size < REPLIES && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const latencies = [...arrivals.entries()].map(([k, at]) => at - (landed.get(k) ?? at)).sort((a, b) => a - b);
  const replySummary = {
    replies: REPLIES,
    delivered: arrivals.size,
    lost: REPLIES - arrivals.size,
    duplicated: duplicates,
    landed_to_message_received_ms: {
      p50: Math.round(pct(latencies, 50)),
      p95: Math.round(pct(latencies, 95)),
      max: Math.round(latencies.at(-1) ?? NaN),
    },
  };
  console.log(JSON.stringify({ phase: 'replies', ...replySummary }));
  const p95 = replySummary.landed_to_message_received_ms.p95;
  lines.push(
    `replies: ${arrivals.size}/${REPLIES} reached message.received at ${REPLY_RATE}/s; landed → message.received p50 ${replySummary.landed_to_message_received_ms.p50} ms, p95 ${p95} ms (goal ≤ 5000: ${p95 <= 5000 ? 'met' : 'missed'}, ${(p95 / 5000).toFixed(2)} of the goal); lost ${replySummary.lost}, duplicated ${duplicates}`,
  );
} finally {
  for (const l of lines) console.log(l);
  smtp.close();
  await dropBenchOwner(services.orm.em.fork() as EntityManager, benchUser, log);
  receiver.close();
  await stopChild(worker);
  await services.close();
  if (process.env.CI) await stack.stop();
}
process.exit(0);
