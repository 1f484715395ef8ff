// `npm run migration:create -- [name]`: diffs the entities against the schema snapshot and writes a
// new migration under db/migrations/. Review it, then commit it.
import { loadConfig } from '../lib/config.js';
import { openOrm } from '../db/orm.js';

const orm = await openOrm(loadConfig().databaseUrl);
try {
  const initial =
    (await orm.getMigrator().getExecutedMigrations()).length === 0 &&
    (await orm.getMigrator().getPendingMigrations()).length === 0;
  const result = await orm.getMigrator().createMigration(undefined, false, initial, process.argv[2]);
  console.log(result.diff.up.length ? `created ${result.fileName}` : 'no changes');
} finally {
  await orm.close();
}
