// SMTP (nodemailer) and IMAP (imapflow) clients for a mailbox, connected to the address the guard
// validated, and the one mapping of their failures to what the API says (auth_failed, tls_failed,
// host_unreachable).
import { ImapFlow } from 'imapflow';
import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { MailTarget } from './guard.js';
import { MailConnectError, type MailEndpoint } from './settings.js';

/** How long a mail server may take to answer a connect or a command. */
export const MAIL_TIMEOUTS = { connectMs: 10_000, greetingMs: 10_000, socketMs: 60_000 };

export type SmtpTransport = Transporter<SMTPTransport.SentMessageInfo>;

/** How long before its expiry an access token is replaced for a new SMTP login. */
const RENEW_AHEAD_MS = 60_000;

/**
 * SMTP credentials: the password, or for an OAuth mailbox SASL XOAUTH2 through nodemailer's OAuth2
 * support, whose `provisionCallback` asks the token store for a current token whenever a pooled
 * connection logs in after the token expired, or after the server refused it (`renew`).
 */
function smtpAuth(e: MailEndpoint) {
  if (!e.accessToken) return { user: e.user, pass: e.pass };
  let current = e.accessToken;
  return {
    type: 'OAuth2' as const,
    user: e.user,
    accessToken: e.accessToken,
    ...(e.accessTokenExpiresAt ? { expires: e.accessTokenExpiresAt.getTime() - RENEW_AHEAD_MS } : {}),
    ...(e.renew
      ? {
          provisionCallback: (
            _user: string,
            renew: boolean,
            done: (err: Error | null, token?: string, expires?: number) => void,
          ) => {
            e.renew!(renew ? current : undefined).then(
              (t) => {
                current = t.accessToken;
                done(null, t.accessToken, t.expiresAt.getTime() - RENEW_AHEAD_MS);
              },
              (err: Error) => done(err),
            );
          },
        }
      : {}),
  };
}

/** An SMTP transport; `pool` keeps up to `maxConnections` connections open (one pool per account). */
export function smtpTransport(
  e: MailEndpoint,
  target: MailTarget,
  opts: { pool?: boolean; maxConnections?: number; ehloName?: string } = {},
): SmtpTransport {
  const base = {
    host: target.address,
    port: e.port,
    secure: e.security === 'tls',
    requireTLS: e.security === 'starttls',
    ignoreTLS: e.security === 'none',
    auth: smtpAuth(e),
    tls: { servername: target.servername, rejectUnauthorized: true, minVersion: 'TLSv1.2' as const },
    ...(opts.ehloName ? { name: opts.ehloName } : {}),
    connectionTimeout: MAIL_TIMEOUTS.connectMs,
    greetingTimeout: MAIL_TIMEOUTS.greetingMs,
    socketTimeout: MAIL_TIMEOUTS.socketMs,
  };
  if (opts.pool) {
    const pooled: SMTPPool.Options = {
      ...base,
      pool: true,
      maxConnections: opts.maxConnections ?? 2,
      maxMessages: 500,
    };
    return nodemailer.createTransport(pooled) as unknown as SmtpTransport;
  }
  return nodemailer.createTransport(base as SMTPTransport.Options);
}

/** An IMAP client, not yet connected (call `connect()`); logs off. */
/**
 * `socketMs`: how long the connection may be silent before the client gives up on it (default
 * MAIL_TIMEOUTS.socketMs). A session that waits in IDLE for minutes needs more than its longest wait:
 * imapflow answers silence by ending IDLE (a NOOP), which would wake every session every minute.
 */
export function imapClient(e: MailEndpoint, target: MailTarget, socketMs = MAIL_TIMEOUTS.socketMs): ImapFlow {
  return new ImapFlow({
    host: target.address,
    port: e.port,
    secure: e.security === 'tls',
    doSTARTTLS: e.security === 'starttls' ? true : e.security === 'none' ? false : undefined,
    servername: target.servername,
    // SASL XOAUTH2 (imapflow builds it) for an OAuth mailbox, LOGIN/PLAIN with the password otherwise.
    auth: e.accessToken ? { user: e.user, accessToken: e.accessToken } : { user: e.user, pass: e.pass },
    tls: { rejectUnauthorized: true, minVersion: 'TLSv1.2', servername: target.servername },
    logger: false,
    connectionTimeout: MAIL_TIMEOUTS.connectMs,
    greetingTimeout: MAIL_TIMEOUTS.greetingMs,
    socketTimeout: socketMs,
    disableAutoIdle: true,
  });
}

const TLS_PATTERN = /(CERT|SSL|TLS|self[- ]signed|wrong version number|handshake|certificate)/i;

/** A protocol library's failure as MailConnectError: auth_failed, tls_failed or host_unreachable. */
export function mailFailure(err: unknown, side: 'smtp' | 'imap'): MailConnectError {
  if (err instanceof MailConnectError) return err;
  const e = err as {
    code?: string;
    responseCode?: number;
    authenticationFailed?: boolean;
    serverResponseCode?: string;
    message?: string;
    response?: string;
  };
  const text = `${e.code ?? ''} ${e.message ?? ''} ${e.response ?? ''}`;
  // The server could not check the credentials now (SMTP 454 "temporary authentication failure", IMAP
  // NO [UNAVAILABLE], RFC 5530): not a refusal, so retried like a server that did not answer.
  if (
    (e.code === 'EAUTH' && typeof e.responseCode === 'number' && e.responseCode >= 400 && e.responseCode < 500) ||
    (e.authenticationFailed && e.serverResponseCode?.toUpperCase() === 'UNAVAILABLE')
  ) {
    return new MailConnectError(
      'host_unreachable',
      side,
      `the ${side.toUpperCase()} server could not check the credentials now (a temporary failure): ${(e.response ?? e.message ?? '').slice(0, 200)}`,
    );
  }
  if (
    e.authenticationFailed ||
    e.code === 'EAUTH' ||
    e.responseCode === 535 ||
    /AUTHENTICATIONFAILED|invalid credentials|authentication failed/i.test(text)
  ) {
    return new MailConnectError(
      'auth_failed',
      side,
      `the ${side.toUpperCase()} server refused the username or password`,
    );
  }
  if (e.code === 'ETLS' || TLS_PATTERN.test(text)) {
    return new MailConnectError(
      'tls_failed',
      side,
      `TLS with the ${side.toUpperCase()} server failed: ${(e.message ?? 'handshake failed').slice(0, 200)}`,
    );
  }
  return new MailConnectError(
    'host_unreachable',
    side,
    `the ${side.toUpperCase()} server did not answer: ${(e.message ?? e.code ?? 'connection failed').slice(0, 200)}`,
  );
}
