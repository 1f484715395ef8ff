// The outbound policy of lib/outbound-http.ts applied to mail hosts: a customer-chosen SMTP or IMAP
// host must be public (no private, loopback, link-local… address, no local name) unless it is on
// OUTBOUND_ALLOW_HOSTS (`host` or `host:port`: local servers in tests, an internal relay). The name is
// resolved once here and the socket connects to exactly that address (TLS still checks the name), so
// a rebinding between check and connect cannot reach a private address.
import {
  isAllowedHost,
  isBlockedAddress,
  isBlockedHostname,
  systemResolver,
  type Resolver,
} from '../../outbound-http.js';
import ipaddr from 'ipaddr.js';
import { MailConnectError, type MailEndpoint } from './settings.js';

export interface MailHostPolicy {
  allowHosts: readonly string[];
  resolver?: Resolver;
}

export interface MailTarget {
  /** The validated IP address to connect to. */
  address: string;
  /** The name TLS verifies the certificate against (absent for an IP literal). */
  servername: string | undefined;
  allowListed: boolean;
}

/** Resolves and checks `endpoint`'s host; throws MailConnectError `blocked_destination` or `host_unreachable`. */
export async function resolveMailHost(
  side: 'smtp' | 'imap',
  endpoint: MailEndpoint,
  policy: MailHostPolicy,
): Promise<MailTarget> {
  const host = endpoint.host;
  const literal = ipaddr.isValid(host);
  const url = new URL(`https://${literal && host.includes(':') ? `[${host}]` : host}:${endpoint.port}`);
  const allowListed = isAllowedHost(url, policy.allowHosts);
  if (!allowListed && (literal ? isBlockedAddress(host) : isBlockedHostname(host))) {
    throw new MailConnectError(
      'blocked_destination',
      side,
      `${side} host ${host} is a private-network or local address`,
    );
  }
  if (endpoint.security === 'none' && !allowListed) {
    throw new MailConnectError(
      'invalid_credentials',
      side,
      `${side}_security "none" would send the password in clear: use tls or starttls`,
    );
  }
  if (literal) return { address: host, servername: undefined, allowListed };
  let answers: Awaited<ReturnType<Resolver>>;
  try {
    answers = await (policy.resolver ?? systemResolver)(host);
  } catch {
    answers = [];
  }
  if (!answers.length) throw new MailConnectError('host_unreachable', side, `${side} host ${host} does not resolve`);
  const blocked = allowListed ? undefined : answers.find((a) => isBlockedAddress(a.address));
  if (blocked)
    throw new MailConnectError(
      'blocked_destination',
      side,
      `${side} host ${host} resolves to a private-network address (${blocked.address})`,
    );
  return { address: answers[0].address, servername: host, allowListed };
}
