// What a connector's refusal of a call made as a sender account says about the account, decided in
// one place. The routing connector hands every refused account call here (`onRefusal`, wired by
// `providerLookups`), whichever path made it — a campaign send, an inbox reply, a withdrawal, a sync:
//
//   the refusal                                      the account
//   `details.accountLost` (the connector says the    disconnected with the connector's reason
//     account itself must be reconnected: Unipile's  (applyAccountStatus: `account.disconnected` and
//     restricted, checkpoint, credentials expired…)  the notification once; its sends held `not_connected`)
//   `rate_limited`                                   throttled (domain/governor: no slot before the
//                                                    connector's Retry-After, else THROTTLE_DEFAULT_MS)
//
// Anything else is the call's own failure and says nothing about the account.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProviderError } from '../../lib/provider-http.js';
import { throttleAccount } from '../governor/governor.js';
import { applyAccountStatus } from './status.js';

/** How long an account is throttled when the connector's rate-limit answer names no time. */
export const THROTTLE_DEFAULT_MS = 3_600_000;
/** The longest throttle a connector's Retry-After can ask for (a longer wait is the account's caps' job). */
export const THROTTLE_MAX_MS = 7 * 86_400_000;

export type RefusalEffect = { kind: 'lost'; reason: string } | { kind: 'throttled'; until: Date } | null;

/** What the refusal means for the account (pure: the table above). */
export function refusalEffect(err: unknown, now = new Date()): RefusalEffect {
  if (!(err instanceof ProviderError)) return null;
  if (err.details.accountLost) return { kind: 'lost', reason: err.details.reason ?? 'connector_refused' };
  if (err.code === 'rate_limited') {
    const asked = err.retryAfterSeconds != null ? err.retryAfterSeconds * 1000 : THROTTLE_DEFAULT_MS;
    return { kind: 'throttled', until: new Date(now.getTime() + Math.min(Math.max(asked, 1000), THROTTLE_MAX_MS)) };
  }
  return null;
}

/** Applies a refusal of a call made as `connectorAccountId` (an unknown account: nothing to apply). */
export async function applyConnectorRefusal(
  em: EntityManager,
  connectorAccountId: string,
  err: unknown,
): Promise<RefusalEffect> {
  const effect = refusalEffect(err);
  if (!effect) return null;
  if (effect.kind === 'lost') {
    await applyAccountStatus(
      em,
      { connectorAccountId, state: 'disconnected', reason: effect.reason, address: null },
      'check',
    );
    return effect;
  }
  const [account] = await em.execute<{ id: string }[]>(
    'select id from platform_accounts where connector_account_id = ?',
    [connectorAccountId],
  );
  if (!account) return null;
  return { kind: 'throttled', until: await throttleAccount(em, account.id, effect.until) };
}

/** The sink the routing connector calls (lib/connectors/routing.ts `onRefusal`): each call on a fresh EntityManager. */
export const connectorRefusals =
  (em: () => EntityManager) =>
  async (connectorAccountId: string, err: unknown): Promise<void> => {
    await applyConnectorRefusal(em(), connectorAccountId, err);
  };
