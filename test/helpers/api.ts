// One in-process API server per ava worker process, over real HTTP on an ephemeral port, wired to
// the real PostgreSQL, Redis and Temporal that `npm test` brought up.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { createApp } from '../../api/app.js';
import { createHttpServer } from '../../api/http-server.js';
import { createServices, type RunningServices } from '../../api/services-factory.js';
import type { Services } from '../../api/services.js';
import type { Operation } from '../../api/operation.js';
import { allOperations } from '../../api/operations.js';

type Running = { base: string; services: RunningServices; server: Server };
let running: Promise<Running> | undefined;
const extraServers: Server[] = [];

export async function listen(
  services: Services,
  operations: Operation[] = allOperations(),
): Promise<{ base: string; server: Server }> {
  const server = createHttpServer(createApp(services, operations).callback());
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  extraServers.push(server);
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

export function api(): Promise<Running> {
  return (running ??= (async () => {
    const services = await createServices();
    return { ...(await listen(services)), services };
  })());
}

/** Every test file ends with `test.after.always(closeApi)`, so its worker process can exit. */
export async function closeApi(): Promise<void> {
  const servers = extraServers.splice(0);
  await Promise.all(
    servers.map((s) => {
      s.closeAllConnections();
      return new Promise((res) => s.close(res));
    }),
  );
  if (!running) return;
  const { services } = await running;
  running = undefined;
  await services.close();
}

export interface Res<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface ReqOptions {
  token?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  base?: string;
}

export async function call<T = any>(method: string, path: string, opts: ReqOptions = {}): Promise<Res<T>> {
  const base = opts.base ?? (await api()).base;
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  } else if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed as T, headers: res.headers, text };
}

export const uniqueEmail = (tag = 'user') => `${tag}-${randomUUID()}@example.test`;
export const PASSWORD = 'correct horse 42';

export interface TestUser {
  id: string;
  email: string;
  accessToken: string;
  refreshToken: string;
}

export async function createUser(name = 'Test User'): Promise<TestUser> {
  const email = uniqueEmail();
  const r = await call('POST', '/api/auth/signup', { body: { email, password: PASSWORD, name } });
  if (r.status !== 201) throw new Error(`signup failed: ${r.status} ${r.text}`);
  return { id: r.body.user.id, email, accessToken: r.body.access_token, refreshToken: r.body.refresh_token };
}

export async function createPat(user: TestUser, name = 'test token'): Promise<string> {
  const r = await call('POST', '/api/users/me/api-tokens', { token: user.accessToken, body: { name } });
  if (r.status !== 201) throw new Error(`token creation failed: ${r.status} ${r.text}`);
  return r.body.token;
}

export async function createTestApp(user: TestUser, name = 'Test product'): Promise<{ id: string; name: string }> {
  const r = await call('POST', '/api/apps', { token: user.accessToken, body: { name } });
  if (r.status !== 201) throw new Error(`app creation failed: ${r.status} ${r.text}`);
  return r.body;
}
