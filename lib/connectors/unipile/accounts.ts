// Unipile accounts (/work/unipile-notes.md §2–3): connecting through the hosted auth wizard
// (`POST /hosted/accounts/link`), the notify_url callback that names Unipile's account id, status
// (`GET /accounts/{id}`: the account's `sources[].status`) and removal (`DELETE /accounts/{id}`).
//
// Which id our account holds: Unipile creates its account only when the user finishes the hosted
// wizard, so `connect` answers a provisional connector id, `pending:<our account id>`, and the
// notify_url callback (`{ status, account_id, name }`, `name` = our account id) names the real one:
// the hooks route (`POST /hooks/connector/accounts`) replaces the provisional id with it. A provisional
// id is `pending` for `status` and is refused (invalid_request `not_connected`) by the other calls.
// A reconnect (the account already holds Unipile's id) keeps that id: the wizard's `reconnect` type.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { parseWire, type JsonHttpClient } from '../../provider-http.js';
import {
  ConnectorError,
  type ConnectInput,
  type ConnectorAccountState,
  type ConnectorAccountStatus,
  type ConnectStart,
} from '../types.js';
import { accountLostReason, UNIPILE } from './client.js';
import { seg, uid } from './wire.js';

/** ConnectInput, whose `connectorAccountId` (the id the account already holds) makes a reconnect. */
export type UnipileConnectInput = ConnectInput;

const PROVISIONAL = 'pending:';
/** Where the hosted wizard's notify callback comes in (api/hooks/routes.ts), under our public base URL. */
export const UNIPILE_NOTIFY_PATH = '/hooks/connector/accounts';

/** The connector id an account holds from `connect` until the notify callback names Unipile's. */
export const provisionalAccountId = (accountId: string) => `${PROVISIONAL}${accountId}`;
export const isProvisional = (connectorAccountId: string) => connectorAccountId.startsWith(PROVISIONAL);

/** How long a hosted link is asked to stay valid (Unipile also expires every link at its daily restart). */
export const HOSTED_LINK_TTL_MS = 3_600_000;

/** `sources[].status` values and what they mean here. */
const SOURCE_DOWN: Record<string, string> = {
  CREDENTIALS: 'credentials_expired',
  ERROR: 'error',
  STOPPED: 'stopped',
  PERMISSIONS: 'permissions',
};

const account = z.object({
  id: uid,
  sources: z
    .array(z.object({ id: z.string().nullish(), status: z.string().max(40) }))
    .max(100)
    .nullish()
    .transform((v) => v ?? []),
});

const hostedLink = z.object({ url: z.url({ protocol: /^https?$/ }) });

/** What the sources say together: any stopped source disconnects; all OK connects; otherwise pending (CONNECTING, none yet). */
export function stateOfSources(sources: { status: string }[]): { state: ConnectorAccountState; reason: string | null } {
  const down = sources.find((s) => SOURCE_DOWN[s.status]);
  if (down) return { state: 'disconnected', reason: SOURCE_DOWN[down.status] };
  if (sources.length && sources.every((s) => s.status === 'OK')) return { state: 'connected', reason: null };
  return { state: 'pending', reason: null };
}

export interface HostedOptions {
  /** UNIPILE_BASE_URL's origin: `api_url` of the hosted link. */
  apiUrl: string;
  /** Our API's public URL: the notify_url is `<publicBaseUrl>/hooks/connector/accounts`. */
  publicBaseUrl: string;
  /** Signs the notify_url (`?token=`), checked by `parseHostedNotify`; none: the URL carries no token. */
  notifySecret: string | null;
  linkTtlMs: number;
  now: () => Date;
}

export class UnipileAccounts {
  constructor(
    private readonly http: JsonHttpClient,
    private readonly opts: HostedOptions,
  ) {}

  /** The notify_url for our account (with its token when a secret is configured). */
  notifyUrl(accountId: string): string {
    const url = new URL(`${this.opts.publicBaseUrl.replace(/\/+$/, '')}${UNIPILE_NOTIFY_PATH}`);
    if (this.opts.notifySecret) url.searchParams.set('token', hostedNotifyToken(this.opts.notifySecret, accountId));
    return url.toString();
  }

  async connect(input: UnipileConnectInput, signal?: AbortSignal): Promise<ConnectStart> {
    if (input.channel !== 'network')
      throw this.http.fail('invalid_request', 'Unipile connects LinkedIn (network) accounts only', {
        reason: 'unsupported_channel',
      });
    if (input.credentials && Object.keys(input.credentials).length)
      throw this.http.fail('invalid_request', 'Unipile accounts connect through the hosted wizard, not credentials', {
        reason: 'credentials_not_supported',
      });
    const held = input.connectorAccountId && !isProvisional(input.connectorAccountId) ? input.connectorAccountId : null;
    const expiresAt = new Date(this.opts.now().getTime() + this.opts.linkTtlMs);
    const body = {
      type: held ? 'reconnect' : 'create',
      ...(held ? { reconnect_account: held } : { providers: ['LINKEDIN'] }),
      api_url: this.opts.apiUrl,
      expiresOn: expiresAt.toISOString(),
      notify_url: this.notifyUrl(input.accountId),
      name: input.accountId,
      ...(input.returnUrl ? { success_redirect_url: input.returnUrl, failure_redirect_url: input.returnUrl } : {}),
    };
    const r = parseWire(this.http, hostedLink, await this.http.json('POST', 'hosted/accounts/link', { body, signal }));
    return {
      connectorAccountId: held ?? provisionalAccountId(input.accountId),
      kind: 'hosted_link',
      url: r.url,
      expiresAt,
    };
  }

  async status(connectorAccountId: string, signal?: AbortSignal): Promise<ConnectorAccountStatus> {
    const pending = { connectorAccountId, state: 'pending' as const, reason: null, address: null };
    if (isProvisional(connectorAccountId)) return pending;
    let raw: unknown;
    try {
      raw = await this.http.json('GET', `accounts/${seg(connectorAccountId)}`, { signal, notFoundIsNull: true });
    } catch (err) {
      // Unipile refused because of the account itself: that is its status.
      const lost = accountLostReason(err);
      if (lost) return { ...pending, state: 'disconnected', reason: lost };
      throw err;
    }
    if (raw === null) return { ...pending, state: 'disconnected', reason: 'not_found' };
    // The profile URL is not in the account object: `profile` (enrich) fills the address in.
    return { ...pending, ...stateOfSources(parseWire(this.http, account, raw).sources) };
  }

  /** One `GET /accounts/{id}` per id (Unipile has no batch read), eight at a time; any failure fails the page. */
  async statuses(ids: string[], signal?: AbortSignal): Promise<ConnectorAccountStatus[]> {
    if (ids.length > 100) throw this.http.fail('invalid_request', 'at most 100 accounts per statuses call');
    const out: ConnectorAccountStatus[] = new Array(ids.length);
    let next = 0;
    const worker = async () => {
      while (next < ids.length) {
        const i = next++;
        out[i] = await this.status(ids[i], signal);
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, ids.length) }, worker));
    return out;
  }

  /** Removes the account at Unipile (idempotent: unknown is already removed; a provisional one has nothing there). */
  async disconnect(connectorAccountId: string, signal?: AbortSignal): Promise<void> {
    if (isProvisional(connectorAccountId)) return;
    await this.http.json('DELETE', `accounts/${seg(connectorAccountId)}`, { signal, notFoundIsNull: true });
  }
}

/** The notify_url token of an account: HMAC-SHA256 of its id under the secret (base64url). */
export function hostedNotifyToken(secret: string, accountId: string): string {
  return createHmac('sha256', secret).update(`unipile-notify:${accountId}`).digest('base64url');
}

export interface HostedNotify {
  /** Our account id (Unipile echoes the link's `name`). */
  accountId: string;
  /** Unipile's account id: the account's connector id from now on. */
  connectorAccountId: string;
  /** `CREATION_SUCCESS` or `RECONNECTED` (the documented values); anything else is passed through. */
  status: string;
  /** The wizard finished: a connection was created or reconnected. */
  finished: boolean;
}

const notifyBody = z.object({
  status: z.string().trim().min(1).max(100),
  account_id: uid,
  name: uid,
});

/**
 * The hosted wizard's notify_url callback (`{ status, account_id, name }`), for the hooks route.
 * With `auth.secret`, the request's `token` query parameter must be the one `connect` put in the URL
 * for this `name` (Unipile documents no signature: the URL carries our proof), else ConnectorError
 * `auth`; a body that is not a callback is `invalid_request`.
 */
export function parseHostedNotify(
  body: unknown,
  auth?: { secret: string | null; token: string | null | undefined },
): HostedNotify {
  const r = notifyBody.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ConnectorError(
      UNIPILE,
      'invalid_request',
      `not a hosted-auth callback: ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  if (auth?.secret) {
    const expected = Buffer.from(hostedNotifyToken(auth.secret, r.data.name));
    const got = Buffer.from(auth.token ?? '');
    if (got.length !== expected.length || !timingSafeEqual(got, expected))
      throw new ConnectorError(UNIPILE, 'auth', 'the notify token does not match the account');
  }
  return {
    accountId: r.data.name,
    connectorAccountId: r.data.account_id,
    status: r.data.status,
    finished: r.data.status === 'CREATION_SUCCESS' || r.data.status === 'RECONNECTED',
  };
}
