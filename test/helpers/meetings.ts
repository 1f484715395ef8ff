// Meetings and booking tests: a workspace with a lead, instants relative to now.
import { randomUUID } from 'node:crypto';
import { call, createTestApp, type TestUser } from './api.js';
import { createOwner, workspaceIdOf } from './billing.js';
import { seedContacts } from './contacts.js';

/** An ISO instant `hours` from now (negative: in the past). */
export const at = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();

/** A user with a product, a list and one lead (its contact has an email). */
export async function withLead(u?: TestUser, email = `lead-${randomUUID()}@example.test`) {
  const user = u ?? (await createOwner());
  const app = await createTestApp(user);
  const list = await call('POST', `/api/apps/${app.id}/lists`, {
    token: user.accessToken,
    body: { name: `List ${randomUUID()}` },
  });
  const ws = await workspaceIdOf(user.id);
  const [c] = await seedContacts(ws, [{ email, first_name: 'Grace', lists: [list.body.id] }]);
  return { u: user, ws, app, listId: list.body.id as string, leadId: c.leads[list.body.id], contactId: c.id, email };
}
