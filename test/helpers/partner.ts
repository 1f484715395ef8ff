// The partner CRM in tests: installed through the local partner's OAuth flow (install → local
// authorize page → our callback), as a browser would, on the test's API server.
import { randomUUID } from 'node:crypto';
import { api, call, type TestUser } from './api.js';

/** Follows the install to the callback (as a partner account of its own unless `loginHint` names one); returns the callback's answer (the integration and its first sync). */
export async function installPartner(u: TestUser, opts: { loginHint?: string } = {}) {
  const start = await call('POST', '/api/integrations/partner/install', { token: u.accessToken });
  if (start.status !== 200) throw new Error(`install failed: ${start.status} ${start.text}`);
  const authorize = new URL(start.body.authorization_url);
  authorize.searchParams.set('login_hint', opts.loginHint ?? `user-${randomUUID()}`);
  const { base } = await api();
  const consent = await fetch(base + authorize.pathname + authorize.search, { redirect: 'manual' });
  if (consent.status !== 302) throw new Error(`local authorize answered ${consent.status}: ${await consent.text()}`);
  const back = new URL(consent.headers.get('location')!);
  const done = await call('GET', back.pathname + back.search);
  if (done.status !== 200) throw new Error(`callback failed: ${done.status} ${done.text}`);
  return done.body as {
    status: 'installed';
    created: boolean;
    integration: { id: string; kind: string; status: string; credentials: Record<string, string> };
    sync_workflow_id: string;
  };
}
