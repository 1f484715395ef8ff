// The real mail server the test runner starts (scripts/stack/mail.ts: GreenMail on loopback): make
// mailboxes, the credentials that connect one as a sender account, and a prospect's side of the
// conversation over IMAP and SMTP. Every test makes its own addresses (`uniqueAddress`), so files
// running in parallel never read each other's mail.
import { randomUUID } from 'node:crypto';
import { ImapFlow } from 'imapflow';
import nodemailer, { type SendMailOptions } from 'nodemailer';

export interface TestMailServer {
  host: string;
  smtpPort: number;
  imapPort: number;
  smtpsPort: number;
  imapsPort: number;
  apiUrl: string;
}

export function mailServer(): TestMailServer {
  const env = process.env;
  if (!env.TEST_MAIL_API_URL)
    throw new Error('no test mail server: run the tests with `npm test` (it starts GreenMail)');
  return {
    host: env.TEST_MAIL_HOST ?? '127.0.0.1',
    smtpPort: Number(env.TEST_MAIL_SMTP_PORT),
    imapPort: Number(env.TEST_MAIL_IMAP_PORT),
    smtpsPort: Number(env.TEST_MAIL_SMTPS_PORT),
    imapsPort: Number(env.TEST_MAIL_IMAPS_PORT),
    apiUrl: env.TEST_MAIL_API_URL,
  };
}

/** A fresh address at `domain` (default `mail.test`). */
export const uniqueAddress = (local = 'user', domain = 'mail.test') => `${local}-${randomUUID().slice(0, 8)}@${domain}`;

/** Creates a mailbox (login = address) with `password`; returns the address. */
export async function createMailbox(address: string, password = 'secret'): Promise<string> {
  const res = await fetch(`${mailServer().apiUrl}/api/user`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: address, login: address, password }),
  });
  if (!res.ok) throw new Error(`GreenMail refused the mailbox ${address}: ${res.status} ${await res.text()}`);
  return address;
}

/** The `credentials` of POST /api/platform-accounts/{id}/connect for a mailbox on the test server (plain ports: the host is allow-listed). */
export function mailCredentials(
  address: string,
  password = 'secret',
  over: Record<string, string> = {},
): Record<string, string> {
  const m = mailServer();
  return {
    email: address,
    username: address,
    password,
    smtp_host: m.host,
    smtp_port: String(m.smtpPort),
    smtp_security: 'none',
    imap_host: m.host,
    imap_port: String(m.imapPort),
    imap_security: 'none',
    ...over,
  };
}

/** An IMAP session as `address` (a prospect's mailbox is created on first delivery with its address as password). */
export async function openMailbox(address: string, password = address): Promise<ImapFlow> {
  const m = mailServer();
  const c = new ImapFlow({
    host: m.host,
    port: m.imapPort,
    secure: false,
    doSTARTTLS: false,
    auth: { user: address, pass: password },
    logger: false,
  });
  await c.connect();
  return c;
}

/** Sends a raw message or a composed one over SMTP as `from` (no authentication needed on the test server). */
export async function sendAs(from: string, message: SendMailOptions): Promise<void> {
  const m = mailServer();
  const t = nodemailer.createTransport({ host: m.host, port: m.smtpPort, secure: false, ignoreTLS: true });
  try {
    await t.sendMail({ from, ...message });
  } finally {
    t.close();
  }
}

/** Waits (on a condition, polling every 200 ms) until `address`'s INBOX has at least `count` messages; returns their sources, oldest first. */
export async function waitForMail(
  address: string,
  count = 1,
  timeoutMs = 30_000,
  password = address,
): Promise<{ uid: number; source: string }[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await openMailbox(address, password).catch(() => null);
    if (c) {
      try {
        const box = await c.mailboxOpen('INBOX');
        if (box.exists >= count) {
          const out: { uid: number; source: string }[] = [];
          for await (const msg of c.fetch('1:*', { uid: true, source: true }))
            out.push({ uid: msg.uid, source: msg.source?.toString('utf8') ?? '' });
          return out;
        }
      } finally {
        await c.logout().catch(() => undefined);
      }
    }
    if (Date.now() > deadline) throw new Error(`${address} did not receive ${count} message(s) within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
