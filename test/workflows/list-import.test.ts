// CSV imports into lead lists on the real dev server (docs/imports.md): drafts with detection and a
// suggested mapping, commits that start `list-import:<id>`, dedupe modes, re-imports that add
// nothing, exact progress and invalid rows, cancel, the Operator tools, replay tests.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { api, call, createTestApp, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { commit, draftPath, peopleCsv, preview, waitImport } from '../helpers/imports.js';
test.after.always(closeApi);

const auth = (u: TestUser) => ({ token: u.accessToken });

async function setup() {
  const u = await createOwner();
  const app = await createTestApp(u);
  const list = await call('POST', `/api/apps/${app.id}/lists`, { ...auth(u), body: { name: 'Imported' } });
  return { u, appId: app.id, listId: list.body.id as string, workspaceId: await workspaceIdOf(u.id) };
}

const leadsOf = async (listId: string) => Number((await (await em()).execute('select count(*)::int as n from leads where list_id = ?', [listId]))[0].n);
const contactsOf = async (workspaceId: string) => Number((await (await em()).execute('select count(*)::int as n from contacts where workspace_id = ?', [workspaceId]))[0].n);

test('preview → commit → completed: counts, contacts and leads, a workflow per import', async (t) => {
  const s = await setup();
  const tag = randomUUID().slice(0, 8);
  const p = await preview(s.u, s.appId, peopleCsv(30, tag));
  t.is(p.status, 201, p.text);
  t.like(p.body, { status: 'draft', format: { encoding: 'utf-8', bom: false, delimiter: ',', has_header: true }, workflow_id: null });
  t.deepEqual(p.body.suggested_mapping, { email: 0, profile_url: 1, first_name: 2, last_name: 3, title: 4, company: 5, country: 6 });
  t.like(p.body.sample, { rows_checked: 30, valid: 30, invalid: 0, complete: true, existing_contacts: 0 });
  const c = await commit(s.u, s.appId, p.body.id, { list_id: s.listId });
  t.is(c.status, 202, c.text);
  t.is(c.body.workflow_id, `list-import:${p.body.id}`);
  const done = await waitImport(s.u, s.appId, p.body.id);
  t.is(done.status, 'completed', JSON.stringify(done.error));
  t.like(done.progress, { rows_read: 30, created: 30, updated: 0, duplicate: 0, invalid: 0, leads_added: 30, percent: 100 });
  t.is(await leadsOf(s.listId), 30);
  t.is(await contactsOf(s.workspaceId), 30);
  const leads = await call('GET', `/api/lists/${s.listId}/leads?limit=200`, auth(s.u));
  t.true(leads.body.items.every((l: { source: string }) => l.source === 'import'));
});
