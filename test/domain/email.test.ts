import test from 'ava';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { api, closeApi, createUser, uniqueEmail } from '../helpers/api.js';
import { OutboxEmailSender, SmtpEmailSender, emailSender, type EmailSender } from '../../lib/email.js';
import { OutboxEmail } from '../../db/entities/OutboxEmail.js';
import { TeamInvitation } from '../../db/entities/TeamInvitation.js';
import { createInvitation, deliverInvitation } from '../../domain/team/team.js';
import { ownActor } from '../../domain/workspaces.js';
import { createOwner } from '../helpers/billing.js';
test.after.always(closeApi);

/** A minimal SMTP server speaking just enough of RFC 5321 for one plain-text delivery. */
async function fakeSmtp(): Promise<{ url: string; messages: string[]; server: Server }> {
  const messages: string[] = [];
  const server = createServer((sock) => {
    let buf = '';
    let inData = false;
    sock.write('220 localhost ESMTP test\r\n');
    sock.on('data', (chunk) => {
      buf += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buf.indexOf('\r\n.\r\n');
          if (end < 0) return;
          messages.push(buf.slice(0, end));
          buf = buf.slice(end + 5);
          inData = false;
          sock.write('250 2.0.0 queued\r\n');
          continue;
        }
        const nl = buf.indexOf('\r\n');
        if (nl < 0) return;
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        const cmd = line.slice(0, 4).toUpperCase();
        if (cmd === 'EHLO') sock.write('250-localhost\r\n250 8BITMIME\r\n');
        else if (cmd === 'DATA') {
          inData = true;
          sock.write('354 go ahead\r\n');
        } else if (cmd === 'QUIT') {
          sock.end('221 bye\r\n');
          return;
        } else sock.write('250 OK\r\n');
      }
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  return { url: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`, messages, server };
}

test('the SMTP adapter delivers over SMTP', async (t) => {
  const smtp = await fakeSmtp();
  try {
    const sender = new SmtpEmailSender(smtp.url, 'Team <team@example.test>');
    await sender.send({ to: 'someone@example.test', subject: 'Hello there', text: 'Body line' });
    t.is(smtp.messages.length, 1);
    t.regex(smtp.messages[0], /Subject: Hello there/);
    t.regex(smtp.messages[0], /To: someone@example.test/);
    t.regex(smtp.messages[0], /Body line/);
  } finally {
    smtp.server.close();
  }
});

test('without SMTP_URL the default adapter records messages in sent_emails', async (t) => {
  const { services } = await api();
  const sender = emailSender(services.orm, { from: 'x@example.test' });
  t.true(sender instanceof OutboxEmailSender);
  const to = uniqueEmail('outbox');
  await sender.send({ to, subject: 'S', text: 'T', html: '<p>T</p>' });
  const row = await services.orm.em.fork().findOneOrFail(OutboxEmail, { to });
  t.like(row, { subject: 'S', text: 'T', html: '<p>T</p>' });
});

test('a failing email leaves the committed invitation in place with email_status "failed"', async (t) => {
  const { services } = await api();
  const owner = await createOwner();
  const em = services.orm.em.fork();
  const actor = await ownActor(em, { userId: owner.id, kind: 'session' });
  const { invitation, token } = await createInvitation(em, actor, { email: uniqueEmail('fail'), role: 'member' });
  const broken: EmailSender = {
    kind: 'smtp',
    send: async () => {
      throw new Error('smtp down');
    },
  };
  t.is(await deliverInvitation(services.orm, broken, services.config, invitation, token), 'failed');
  const row = await services.orm.em.fork().findOneOrFail(TeamInvitation, invitation.id);
  t.is(row.emailStatus, 'failed');
  t.is(row.revokedAt, null);
});
