// `npm run bench:leads`: approves 5,000 discovered leads through the domain's set-based batch
// function (`approveDiscoveredLeads`) in batches of 500, then another 5,000 in batches of 100, and
// prints the time and the SQL statements issued per batch (counted by wrapping the connection's
// `execute`; each batch also runs BEGIN/COMMIT). Goal: ≤ 2 s in total for 5,000, and statements per
// batch independent of the batch size. Own database (`outreach_bench`), no worker needed.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { benchOwner, benchStack, countingOrm } from './bench-fixtures.js';

const { stack, env, log } = await benchStack('leads', { suffix: 'bench', redisDb: 2 });

// Imported after the environment is set: config is read once.
const { createAgent } = await import('../domain/agents/agents.js');
const { createList } = await import('../domain/lists/lists.js');
const { approveDiscoveredLeads } = await import('../domain/discovered-leads/discovered-leads.js');
const { uuidv7 } = await import('../lib/ids.js');

const TOTAL = 5_000;
const { orm, statements } = await countingOrm(env.DATABASE_URL!);

try {
  const em = orm.em.fork() as EntityManager;
  const { actor, app } = await benchOwner(em);

  async function prepare(name: string): Promise<string[]> {
    const list = await createList(em, actor, app.id, { name });
    const agent = await createAgent(em, actor, app.id, { name, list_id: list.id });
    const rows = Array.from({ length: TOTAL }, (_, i) => {
      const k = `${name}-${i}-${randomUUID().slice(0, 8)}`;
      return {
        id: uuidv7(),
        key: k,
        url: `https://pronet.example/in/${k}`,
        email: i % 2 ? `${k}@example.com` : null,
        name: `Person ${k}`,
      };
    });
    await em.execute(
      `insert into discovered_leads (id, workspace_id, app_id, agent_id, signal_key, evidence_key, source, external_id, dedupe_key, profile_url, email,
         full_name, title, company, evidence, score, reasons, status, promoted, created_at, updated_at)
       select v.id, ?, ?, ?, 'bench', left(v.key, 64), 'pronet', v.key, v.key, v.url, v.email, v.name, 'CTO', 'Acme', '{}', 80, '[]', 'new', false, now(), now()
       from json_to_recordset(?::json) as v(id uuid, key text, url text, email text, name text)`,
      [actor.workspaceId, app.id, agent.id, JSON.stringify(rows)],
    );
    return rows.map((r) => r.id);
  }

  async function approveAll(ids: string[], size: number) {
    const perBatch: number[] = [];
    let approved = 0;
    const started = performance.now();
    for (let i = 0; i < ids.length; i += size) {
      const before = statements();
      const results = await approveDiscoveredLeads(
        orm.em.fork() as EntityManager,
        actor,
        ids.slice(i, i + size),
        undefined,
        new Set(),
      );
      approved += results.filter((r) => r.result === 'approved').length;
      perBatch.push(statements() - before);
    }
    const seconds = (performance.now() - started) / 1000;
    return { seconds, approved, batches: perBatch.length, min: Math.min(...perBatch), max: Math.max(...perBatch) };
  }

  log('inserting 2 × 5,000 discovered leads');
  const a = await prepare('batches of 500');
  const b = await prepare('batches of 100');
  const big = await approveAll(a, 500);
  const small = await approveAll(b, 100);
  const leads: { n: string }[] = await em.execute('select count(*) as n from leads where workspace_id = ?', [
    actor.workspaceId,
  ]);
  console.log(
    [
      `approve 5,000 in batches of 500: ${big.seconds.toFixed(2)} s, ${big.approved} approved in ${big.batches} batches, SQL statements per batch: ${big.min}–${big.max} (+ BEGIN/COMMIT) (goal ≤ 2 s) ${big.seconds <= 2 ? 'MET' : 'MISSED'}`,
      `approve 5,000 in batches of 100: ${small.seconds.toFixed(2)} s, ${small.approved} approved in ${small.batches} batches, SQL statements per batch: ${small.min}–${small.max} (+ BEGIN/COMMIT)`,
      `statements per batch independent of batch size: ${big.max === small.max ? 'YES' : 'NO'}; list members created: ${leads[0].n}`,
    ].join('\n'),
  );
} finally {
  await orm.close();
  if (process.env.CI) await stack.stop();
}
process.exit(0);
