// Outbound email. `SMTP_URL` set → SMTP through nodemailer; otherwise a local adapter that records
// each message in the `sent_emails` table (so the product runs offline and tests can read mail back).
import type { MikroORM } from '@mikro-orm/postgresql';
import nodemailer from 'nodemailer';
import type { EmailConfig } from './config.js';
import { uuidv7 } from './ids.js';

export type { EmailConfig } from './config.js';

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface EmailSender {
  readonly kind: 'smtp' | 'outbox';
  send(msg: EmailMessage): Promise<void>;
}

export class SmtpEmailSender implements EmailSender {
  readonly kind = 'smtp' as const;
  private readonly transport;
  constructor(
    smtpUrl: string,
    private readonly from: string,
  ) {
    // Short timeouts: the caller has already committed its work and only records the outcome.
    this.transport = nodemailer.createTransport(smtpUrl, {
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    } as never);
  }
  async send(msg: EmailMessage): Promise<void> {
    await this.transport.sendMail({
      from: this.from,
      to: msg.to,
      subject: msg.subject,
      text: msg.text,
      html: msg.html,
    });
  }
}

export class OutboxEmailSender implements EmailSender {
  readonly kind = 'outbox' as const;
  constructor(private readonly orm: MikroORM) {}
  async send(msg: EmailMessage): Promise<void> {
    // Plain SQL on the `sent_emails` table (db/entities/OutboxEmail.ts): lib/ stays below db/.
    await this.orm.em
      .fork()
      .getConnection()
      .execute(`insert into sent_emails (id, "to", subject, text, html, created_at) values (?, ?, ?, ?, ?, now())`, [
        uuidv7(),
        msg.to,
        msg.subject.slice(0, 500),
        msg.text,
        msg.html ?? null,
      ]);
  }
}

const senders = new WeakMap<MikroORM, EmailSender>();

/** The process-wide sender for this database (one per ORM instance). */
export function emailSender(orm: MikroORM, config: EmailConfig): EmailSender {
  let s = senders.get(orm);
  if (!s) {
    s = config.smtpUrl ? new SmtpEmailSender(config.smtpUrl, config.from) : new OutboxEmailSender(orm);
    senders.set(orm, s);
  }
  return s;
}
