// `npm run migrate`: applies committed migrations to DATABASE_URL (or the embedded default).
import { loadConfig } from '../lib/config.js';
import { migrate, openOrm } from '../db/orm.js';

const orm = await openOrm(loadConfig().databaseUrl);
try {
  await migrate(orm);
  console.log('migrations applied');
} finally {
  await orm.close();
}
