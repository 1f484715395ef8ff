// The real work the chaos harness drives through the API (round-robin over its processes, retrying
// as a client should: on 503 after Retry-After, on a refused connection at another process): a
// workspace with sandbox email senders, a two-email campaign enrolled in waves, list imports, a
// webhook subscription to a local receiver, and Operator turns.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';

export interface Ctx {
  bases: () => string[];
  token: string;
  log: (msg: string) => void;
}

export interface Res {
  status: number;
  body: any; // JSON of many shapes
}

let turn = 0;

/**
 * One request, retried while the service says "later" (503 + Retry-After) or the process it hit is
 * gone; only for requests that are safe to repeat (reads, or writes with a client key).
 */
export async function call(
  ctx: Pick<Ctx, 'bases' | 'token'>,
  method: string,
  path: string,
  body?: unknown,
  opts: { retryMs?: number } = {},
): Promise<Res> {
  const deadline = Date.now() + (opts.retryMs ?? 180_000);
  for (;;) {
    const bases = ctx.bases();
    const base = bases[turn++ % bases.length];
    let wait = 1000;
    try {
      const init: RequestInit = {
        method,
        headers: { authorization: `Bearer ${ctx.token}` },
        signal: AbortSignal.timeout(30_000),
      };
      if (body instanceof FormData) init.body = body;
      else if (body !== undefined) {
        init.body = JSON.stringify(body);
        (init.headers as Record<string, string>)['content-type'] = 'application/json';
      }
      const res = await fetch(base + path, init);
      const text = await res.text();
      if (res.status !== 503) return { status: res.status, body: text ? JSON.parse(text) : undefined };
      wait = Number(res.headers.get('retry-after') ?? 1) * 1000;
    } catch {
      // refused or reset: another process may answer
    }
    if (Date.now() > deadline)
      throw new Error(`${method} ${path}: no answer but 503 or a refused connection for ${opts.retryMs ?? 180_000} ms`);
    await new Promise((r) => setTimeout(r, wait));
  }
}

export async function expect(status: number, p: Promise<Res>, what: string): Promise<any> {
  const r = await p;
  if (r.status !== status) throw new Error(`${what}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
}

/** A sign-up through the API, on the pro plan (set in the database: purchases happen in the web app), with a personal access token. */
export async function signUp(
  base: string,
  db: pg.Pool,
  databaseUrl: string,
): Promise<{ token: string; userId: string; workspaceId: string }> {
  const email = `chaos-${Date.now()}@example.test`;
  const res = await fetch(`${base}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse chaos 42', name: 'Chaos Monkey' }),
  });
  const s = (await res.json()) as { user: { id: string }; access_token: string };
  if (res.status !== 201) throw new Error(`signup: HTTP ${res.status} ${JSON.stringify(s)}`);
  const pat = await expect(
    201,
    call({ bases: () => [base], token: s.access_token }, 'POST', '/api/users/me/api-tokens', { name: 'chaos' }),
    'api token',
  );
  const { rows } = await db.query<{ id: string }>('select id from workspaces where owner_id = $1', [s.user.id]);
  const { setPlan } = await import('../../domain/billing/plans.js');
  const { openOrm } = await import('../../db/orm.js');
  const orm = await openOrm(databaseUrl);
  try {
    await setPlan(orm.em.fork() as never, rows[0].id, 'pro');
  } finally {
    await orm.close();
  }
  return { token: pat.token, userId: s.user.id, workspaceId: rows[0].id };
}

/** `count` sandbox email senders, connected through the API, then given no gap, no warm-up, hours all week and the plan's caps. */
export async function senders(ctx: Ctx, db: pg.Pool, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const a = await expect(
      201,
      call(ctx, 'POST', '/api/platform-accounts', {
        channel: 'email',
        display_name: `Sender ${i + 1}`,
        time_zone: 'UTC',
      }),
      'account',
    );
    await expect(
      200,
      call(ctx, 'POST', `/api/platform-accounts/${a.id}/connect`, {
        credentials: { username: `chaos-sender-${i}-${Date.now()}` },
      }),
      'connect',
    );
    ids.push(a.id);
  }
  await db.query(
    `update platform_accounts set min_gap_seconds = 0, jitter_seconds = 0, warmup_skipped_at = now(),
       working_hours = '{"days":[1,2,3,4,5,6,7],"start":"00:00","end":"24:00"}'::jsonb,
       caps = '{"email":{"daily":500,"weekly":2500}}'::jsonb where id = any($1::uuid[])`,
    [ids],
  );
  return ids;
}

const ALL_WEEK = Object.fromEntries(
  ['1', '2', '3', '4', '5', '6', '7'].map((d) => [d, [{ start: '00:00', end: '24:00' }]]),
);

export async function campaign(ctx: Ctx, appId: string, accountIds: string[]): Promise<string> {
  const c = await expect(
    201,
    call(ctx, 'POST', `/api/apps/${appId}/campaigns`, {
      name: 'Chaos',
      time_zone: 'UTC',
      sending_windows: ALL_WEEK,
      account_ids: accountIds,
    }),
    'campaign',
  );
  for (const [i, subject] of ['Hello {{first_name}}', 'Following up'].entries()) {
    await expect(
      201,
      call(ctx, 'POST', `/api/campaigns/${c.id}/steps`, {
        type: 'email',
        config: { subject, body: `Step ${i + 1} for {{first_name}} at {{company}}.` },
      }),
      'step',
    );
  }
  await expect(200, call(ctx, 'PATCH', `/api/campaigns/${c.id}/status`, { status: 'active' }), 'activate');
  return c.id as string;
}

export function peopleCsv(rows: number, tag: string): Blob {
  const out = ['Email,First Name,Last Name,Company\n'];
  for (let i = 0; i < rows; i++)
    out.push(`p${i}.${tag}@company${i % 997}.example,First${i},Last${i},"Company ${i % 997}, Inc."\n`);
  return new Blob([out.join('')], { type: 'text/csv' });
}

/** A new list and an import of `rows` people into it; resolves once the import is accepted (202). */
export async function startImport(
  ctx: Ctx,
  appId: string,
  name: string,
  rows: number,
): Promise<{ listId: string; importId: string }> {
  const list = await expect(201, call(ctx, 'POST', `/api/apps/${appId}/lists`, { name }), 'list');
  const form = new FormData();
  form.append('list_id', list.id);
  form.append('file', peopleCsv(rows, name.replace(/\W/g, '').toLowerCase()), `${name}.csv`);
  // Not retried on a refused connection: an upload that may have landed is not repeated blindly.
  const imp = await expect(202, call(ctx, 'POST', `/api/apps/${appId}/lists/import`, form, { retryMs: 0 }), 'import');
  return { listId: list.id, importId: imp.id };
}

export async function importStatus(
  db: pg.Pool,
  id: string,
): Promise<{ status: string; rows_read: number; created: number }> {
  const { rows } = await db.query('select status, rows_read, created from list_imports where id = $1', [id]);
  return rows[0];
}

/** Enrolls a whole list (a job with a client key, so a retry after an unknown outcome starts nothing new). */
export async function enrollList(ctx: Ctx, campaignId: string, listId: string): Promise<void> {
  await expect(
    202,
    call(ctx, 'POST', `/api/campaigns/${campaignId}/enroll-list-contacts`, {
      list_id: listId,
      client_key: `wave-${listId}`,
    }),
    'enroll',
  );
}

export interface Received {
  /** Per body (an event's exact bytes): how many requests carried it. */
  bodies: Map<string, number>;
  /** Per attempt id (X-Service-Delivery): how many requests carried it. */
  attempts: Map<string, number>;
}

/** The receiver of the webhook stream: every body and attempt id it was sent, with how many times. */
export async function startReceiver(): Promise<Received & { url: string; server: Server }> {
  const received: Received = { bodies: new Map(), attempts: new Map() };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const attempt = String(req.headers['x-service-delivery']);
      received.bodies.set(body, (received.bodies.get(body) ?? 0) + 1);
      received.attempts.set(attempt, (received.attempts.get(attempt) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, ...received, server };
}

/**
 * Operator turns, one after another on alternating processes, until stopped: each is a POST whose
 * server-sent stream names the turn first; the stream may break (its process killed), the turn goes
 * on in its workflow. A turn the API refused before naming it (503, refused connection) is retried.
 */
export class Turns {
  readonly started: string[] = [];
  refused = 0;
  broken = 0;
  private running = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly ctx: Ctx,
    private readonly appId: string,
  ) {}

  start(everyMs: number): void {
    this.running = true;
    this.loop = (async () => {
      for (let i = 0; this.running; i++) {
        await this.one(this.ctx.bases()[i % this.ctx.bases().length]);
        await new Promise((r) => setTimeout(r, everyMs));
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** One turn on `base`; resolves when its stream ends or breaks. */
  async one(base: string): Promise<void> {
    let named = false;
    try {
      const res = await fetch(`${base}/api/agent/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.ctx.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ app_id: this.appId, message: 'list products' }),
        signal: AbortSignal.timeout(60_000),
      });
      if (!res.ok || !res.body) {
        this.refused++;
        await res.text();
        return;
      }
      const decoder = new TextDecoder();
      let text = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        if (!named) {
          const m = /"turn_id":"([0-9a-f-]{36})"/.exec(text);
          if (m) {
            this.started.push(m[1]);
            named = true;
          }
        }
      }
    } catch {
      if (named) this.broken++;
      else this.refused++;
    }
  }
}
