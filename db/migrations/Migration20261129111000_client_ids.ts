import { Migration } from '@mikro-orm/migrations';

// Issue 40: a discovery launch's client-chosen `launch_id` is scoped to its workspace. It was the
// run's primary key, so one workspace's launch id could collide with (and reveal) another's run; now
// the run has an id of its own and the launch id is unique per workspace. Manual runs recorded
// before keep their id as their launch id, so repeating an earlier launch still finds its run.
// A refused company-import event (not_found, invalid_transition) no longer keeps its client id: those
// recorded before are dropped, which frees their ids (they changed nothing).
export class Migration20261129111000_client_ids extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "discovery_runs" add column "launch_id" uuid null;`);
    this.addSql(`update "discovery_runs" set "launch_id" = "id" where "trigger" = 'manual';`);
    this.addSql(
      `alter table "discovery_runs" add constraint "discovery_runs_workspace_id_launch_id_unique" unique ("workspace_id", "launch_id");`,
    );
    // Table names unquoted after FROM: the build test's import scan reads a quoted one there as a module import.
    this.addSql(`delete from cdm_import_events where result in ('not_found', 'invalid_transition');`);
  }

  override async down(): Promise<void> {
    // The dropped refused events are not restored (they changed nothing).
    this.addSql(`alter table "discovery_runs" drop constraint "discovery_runs_workspace_id_launch_id_unique";`);
    this.addSql(`alter table "discovery_runs" drop column "launch_id";`);
  }
}
