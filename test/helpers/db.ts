// Direct database set-up for states that later issues will reach through the API (e.g. team
// membership before invitations exist).
import { randomUUID } from 'node:crypto';
import { TeamMember } from '../../db/entities/TeamMember.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { User } from '../../db/entities/User.js';
import { api } from './api.js';
import { credentialsChanged } from '../../lib/credential-cache.js';

export async function addTeamMember(
  ownerId: string,
  memberId: string,
  access: { role?: 'admin' | 'member'; appIds?: string[] } = {},
) {
  const em = (await api()).services.orm.em.fork();
  const workspace = await em.findOneOrFail(Workspace, { owner: ownerId });
  const member = em.create(TeamMember, {
    workspace,
    user: em.getReference(User, memberId),
    role: access.role ?? 'member',
    allApps: access.appIds === undefined,
    appIds: access.appIds ?? [],
  });
  await em.flush();
  return member.id;
}

export async function removeTeamMember(id: string) {
  const em = (await api()).services.orm.em.fork();
  const member = await em.findOneOrFail(TeamMember, id);
  await em.nativeDelete(TeamMember, { id });
  await credentialsChanged(member.user.id); // as the domain's removal does, for the credential cache
}

/**
 * Makes every insert into `table` for which `when` holds fail in the database (a trigger raising
 * SQLSTATE P0001), so that a test reaches the 5xx answer of a write that fails unexpectedly through
 * the real code path. `when` is SQL over `new`, written by the test and scoped to its own rows (other
 * tests write to the same table at the same time), e.g. `new.app_id = '<uuid>'`. Call `remove()`
 * (from `t.teardown`): it drops the trigger and its function.
 */
export async function failInserts(table: string, when: string): Promise<{ remove(): Promise<void> }> {
  const em = (await api()).services.orm.em.fork();
  const name = `test_fail_${randomUUID().replaceAll('-', '')}`;
  await em.execute(`create function ${name}() returns trigger language plpgsql as $fn$
    begin
      if ${when} then raise exception 'injected failure of an insert into ${table} (test)'; end if;
      return new;
    end $fn$`);
  await em.execute(`create trigger ${name} before insert on ${table} for each row execute function ${name}()`);
  let removed = false;
  return {
    async remove() {
      if (removed) return;
      removed = true;
      await em.execute(`drop trigger if exists ${name} on ${table}`);
      await em.execute(`drop function if exists ${name}()`);
    },
  };
}
