// A local OAuth 2.0 authorization server speaking Google's or Microsoft's documented token endpoint, and
// an XOAUTH2 gateway in front of the test mail server (GreenMail), for the mailboxes connected with
// OAuth (docs/email.md "Connecting with Google or Microsoft").
//
// The authorization server: `GET /authorize` (response_type=code, PKCE S256 required) consents at once
// for `signIn` (the address that "signs in") and redirects to redirect_uri with `code` and `state`;
// `POST /token` takes the form body with client_id + client_secret and answers
// - `grant_type=authorization_code` (+ code, redirect_uri, code_verifier checked against the challenge):
//   access_token, expires_in, refresh_token, and an id_token naming the address (`email`; Microsoft
//   style also `preferred_username`);
// - `grant_type=refresh_token`: a new access_token; Microsoft style also a new refresh_token, the old one
//   then refused (rotation); Google style none (the one held stays valid);
// - 400 `{"error":"invalid_grant"}` for a spent code, a bad verifier, an unknown, rotated or revoked
//   refresh token; `failNext(n)` answers 503 n times (a provider outage).
//
// GreenMail 2.1 accepts SASL XOAUTH2 on SMTP and IMAP, but checks the bearer token as the user's
// password (UserManager.test) — it knows nothing of OAuth. The gateway is a TCP relay that reads the
// client's lines until it authenticates: an `AUTH XOAUTH2 <b64>` (SMTP) or `<tag> AUTHENTICATE XOAUTH2
// <b64>` (IMAP, SASL-IR) whose token the authorization server says is live for that user (issued to
// it, not expired, not revoked) is passed on with the mailbox's password in its place; any other token
// with one GreenMail refuses. So the mail server refuses expired and revoked tokens as Gmail and
// Exchange Online do. Everything after the authentication is relayed untouched.
import { createHash, randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';

export type OAuthStyle = 'google' | 'microsoft';

interface Grant {
  user: string;
  revoked: boolean;
}

export interface TestAuthServer {
  url: string;
  style: OAuthStyle;
  clientId: string;
  clientSecret: string;
  /** The address that signs in at the next authorization. */
  signIn: string;
  /** expires_in of the access tokens issued from now on (seconds). */
  expiresIn: number;
  /** Every token request, in order (grant_type and the refresh token used). */
  requests: { grantType: string; refreshToken?: string; status: number }[];
  /** Whether `token` is a live access token of `user`. */
  live(user: string, token: string): boolean;
  /** Revokes every grant of `user` (its refresh and access tokens stop working). */
  revoke(user: string): void;
  /** The next `n` token requests answer 503. */
  failNext(n: number): void;
  /** Makes the access tokens issued so far expire now. */
  expireAccessTokens(): void;
  close(): Promise<void>;
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function testAuthServer(style: OAuthStyle, signIn = ''): Promise<TestAuthServer> {
  const clientId = `client-${style}-${randomBytes(4).toString('hex')}`;
  const clientSecret = `secret-${randomBytes(8).toString('hex')}`;
  const codes = new Map<string, { user: string; challenge: string; redirectUri: string }>();
  const refreshTokens = new Map<string, Grant>();
  const accessTokens = new Map<string, { grant: Grant; expiresAt: number }>();
  let failures = 0;
  const issue = (grant: Grant, withRefresh: boolean, idToken: boolean) => {
    const access = `at-${randomBytes(12).toString('hex')}`;
    accessTokens.set(access, { grant, expiresAt: Date.now() + self.expiresIn * 1000 });
    const out: Record<string, unknown> = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: self.expiresIn,
      scope: style === 'google' ? 'https://mail.google.com/ openid email' : 'IMAP.AccessAsUser.All SMTP.Send',
    };
    if (withRefresh) {
      const refresh = `rt-${randomBytes(12).toString('hex')}`;
      refreshTokens.set(refresh, grant);
      out.refresh_token = refresh;
    }
    if (idToken) {
      const claims =
        style === 'google'
          ? {
              iss: 'https://accounts.google.com',
              aud: clientId,
              sub: grant.user,
              email: grant.user,
              email_verified: true,
            }
          : {
              iss: 'https://login.microsoftonline.com/tid/v2.0',
              aud: clientId,
              email: grant.user,
              preferred_username: grant.user,
            };
      out.id_token = `${b64url({ alg: 'RS256', typ: 'JWT' })}.${b64url({ ...claims, exp: Math.floor(Date.now() / 1000) + 3600 })}.c2ln`;
    }
    return out;
  };

  const server: Server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method === 'GET' && url.pathname === '/authorize') {
      const q = url.searchParams;
      if (q.get('response_type') !== 'code' || q.get('client_id') !== clientId)
        return json(400, { error: 'invalid_request' });
      if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge'))
        return json(400, { error: 'invalid_request', error_description: 'PKCE S256 required' });
      const code = `code-${randomBytes(12).toString('hex')}`;
      codes.set(code, { user: self.signIn, challenge: q.get('code_challenge')!, redirectUri: q.get('redirect_uri')! });
      const to = new URL(q.get('redirect_uri')!);
      to.searchParams.set('code', code);
      to.searchParams.set('state', q.get('state') ?? '');
      res.writeHead(302, { location: to.toString() }).end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      void formOf(req).then((f) => {
        const grantType = f.get('grant_type') ?? '';
        const answer = (status: number, body: unknown) => {
          self.requests.push({ grantType, refreshToken: f.get('refresh_token') ?? undefined, status });
          json(status, body);
        };
        if (failures > 0) {
          failures--;
          return answer(503, { error: 'temporarily_unavailable' });
        }
        if (f.get('client_id') !== clientId || f.get('client_secret') !== clientSecret)
          return answer(401, { error: 'invalid_client' });
        if (grantType === 'authorization_code') {
          const c = codes.get(f.get('code') ?? '');
          codes.delete(f.get('code') ?? '');
          const verifier = f.get('code_verifier') ?? '';
          if (
            !c ||
            c.redirectUri !== f.get('redirect_uri') ||
            createHash('sha256').update(verifier).digest('base64url') !== c.challenge
          )
            return answer(400, { error: 'invalid_grant', error_description: 'bad code or verifier' });
          return answer(200, issue({ user: c.user, revoked: false }, true, true));
        }
        if (grantType === 'refresh_token') {
          const token = f.get('refresh_token') ?? '';
          const grant = refreshTokens.get(token);
          if (!grant || grant.revoked)
            return answer(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
          // Microsoft rotates: the refresh token used is spent, a new one comes with the answer.
          if (style === 'microsoft') refreshTokens.delete(token);
          return answer(200, issue(grant, style === 'microsoft', false));
        }
        answer(400, { error: 'unsupported_grant_type' });
      });
      return;
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const self: TestAuthServer = {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    style,
    clientId,
    clientSecret,
    signIn,
    expiresIn: 3600,
    requests: [],
    live(user, token) {
      const t = accessTokens.get(token);
      return !!t && t.grant.user === user && !t.grant.revoked && t.expiresAt > Date.now();
    },
    revoke(user) {
      for (const g of [...refreshTokens.values(), ...[...accessTokens.values()].map((t) => t.grant)])
        if (g.user === user) g.revoked = true;
    },
    failNext(n) {
      failures = n;
    },
    expireAccessTokens() {
      for (const t of accessTokens.values()) t.expiresAt = Date.now() - 1;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
  return self;
}

export interface XOAuth2Gateway {
  /** The gateway's port in front of the mail server's plain SMTP and IMAP ports. */
  smtpPort: number;
  imapPort: number;
  /** XOAUTH2 logins passed (live token) and refused. */
  logins: { user: string; side: 'smtp' | 'imap'; ok: boolean }[];
  /** Cuts every relayed connection (a server dropping sessions): the next use logs in again. */
  dropAll(): void;
  close(): Promise<void>;
}

const AUTH_LINE = /^((?:AUTH XOAUTH2 )|(?:\S+ AUTHENTICATE XOAUTH2 ))(\S+)(\r?\n)$/i;

/** A gateway to `host` (its SMTP and IMAP ports): live tokens of `auth` become the mailbox `password`. */
export async function xoauth2Gateway(
  target: { host: string; smtpPort: number; imapPort: number },
  auth: Pick<TestAuthServer, 'live'>,
  password: (user: string) => string,
): Promise<XOAuth2Gateway> {
  const sockets = new Set<Socket>();
  const logins: XOAuth2Gateway['logins'] = [];
  const relay = async (side: 'smtp' | 'imap', port: number) => {
    const server = createServer((client) => {
      const upstream = connect(port, target.host);
      sockets.add(client).add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      upstream.pipe(client);
      let raw = false;
      let lines = 0;
      let buf = Buffer.alloc(0);
      client.on('data', (chunk: Buffer) => {
        if (raw) return void upstream.write(chunk);
        buf = Buffer.concat([buf, chunk]);
        for (let i = buf.indexOf(10); !raw && i >= 0; i = buf.indexOf(10)) {
          const line = buf.subarray(0, i + 1).toString('latin1');
          buf = buf.subarray(i + 1);
          lines++;
          const m = AUTH_LINE.exec(line);
          if (m) {
            const sasl = Buffer.from(m[2], 'base64').toString('latin1');
            const user = /^user=([^\x01]*)\x01/.exec(sasl)?.[1] ?? '';
            const token = /\x01auth=Bearer ([^\x01]*)\x01/.exec(sasl)?.[1] ?? '';
            const ok = auth.live(user, token);
            logins.push({ user, side, ok });
            const pass = ok ? password(user) : 'refused-token';
            const rewritten = Buffer.from(`user=${user}\x01auth=Bearer ${pass}\x01\x01`, 'latin1').toString('base64');
            upstream.write(`${m[1]}${rewritten}${m[3]}`, 'latin1');
            raw = true;
          } else {
            upstream.write(line, 'latin1');
            if (lines > 40) raw = true;
          }
        }
        if (raw && buf.length) {
          upstream.write(buf);
          buf = Buffer.alloc(0);
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return server;
  };
  const dropAll = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  const smtp = await relay('smtp', target.smtpPort);
  const imap = await relay('imap', target.imapPort);
  return {
    smtpPort: (smtp.address() as { port: number }).port,
    imapPort: (imap.address() as { port: number }).port,
    logins,
    dropAll,
    async close() {
      dropAll();
      await Promise.all([smtp, imap].map((s) => new Promise((r) => s.close(r))));
    },
  };
}
