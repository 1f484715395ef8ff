// A local stand-in for Unipile's REST API v1 (issue 44; docs/providers.md "Unipile"): what the tests
// point `UNIPILE_BASE_URL` at. It speaks the documented wire format — `X-API-KEY`, JSON bodies (or
// multipart where the docs say so), `{ object, items, cursor }` lists, RFC-7807-like errors
// `{ title, detail, type: "errors/<code>", status }` — written from the docs' own examples
// (/work/unipile-notes.md lists the sources). Its state lives in memory; tests drive it (accounts'
// statuses, acceptances, inbound messages, faults) and read what was requested.
//
// The stand-in is one HTTP server with a route table: each area of the API registers its routes
// (`registerAccounts`, `registerSearch` …) on it.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInRequest {
  method: string;
  /** The path below `/api/v1`, e.g. `/users/invite`. */
  path: string;
  /** The path's captures of the route's pattern. */
  params: string[];
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** The raw body. */
  body: Buffer;
  /** The JSON body, when it was JSON (else undefined). */
  json: unknown;
  /** The fields of a multipart/form-data body (repeated fields as arrays), when it was one. */
  form: Record<string, string | string[]> | undefined;
}

export interface StandInReply {
  status: number;
  /** Sent as JSON unless a Buffer. */
  body?: unknown;
  headers?: Record<string, string>;
}

export type StandInHandler = (req: StandInRequest) => StandInReply | Promise<StandInReply>;

/** The documented error body. */
export const unipileError = (status: number, type: string, title = type, detail?: string): StandInReply => ({
  status,
  body: { title, ...(detail ? { detail } : {}), type: `errors/${type}`, status },
});

export interface StandIn {
  /** `http://127.0.0.1:<port>` (the adapter appends `/api/v1`). */
  url: string;
  apiKey: string;
  /** Every request received, in order (method, path, query, json/form). */
  requests: StandInRequest[];
  route(method: string, pattern: RegExp, handler: StandInHandler): void;
  close(): Promise<void>;
}

/** Starts an empty stand-in (no routes): areas register theirs. Requests without the key answer 401 `missing_credentials`. */
export async function startStandIn(apiKey = 'standin-key'): Promise<StandIn> {
  const routes: { method: string; pattern: RegExp; handler: StandInHandler }[] = [];
  const requests: StandInRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://stand-in');
        const body = Buffer.concat(chunks);
        const type = String(req.headers['content-type'] ?? '');
        let json: unknown;
        let form: Record<string, string | string[]> | undefined;
        if (type.includes('application/json') && body.length) {
          try {
            json = JSON.parse(body.toString('utf8'));
          } catch {
            json = undefined;
          }
        }
        if (type.includes('multipart/form-data')) form = await parseForm(body, type);
        const path = url.pathname.replace(/^\/api\/v1/, '');
        const base = {
          method: req.method ?? 'GET',
          path,
          query: url.searchParams,
          headers: req.headers,
          body,
          json,
          form,
        };
        let reply: StandInReply;
        if (!url.pathname.startsWith('/api/v1/')) reply = unipileError(404, 'resource_not_found', 'Not found');
        else if (req.headers['x-api-key'] !== apiKey)
          reply = unipileError(401, 'missing_credentials', 'Missing credentials');
        else {
          const match = routes
            .map((r) => ({ r, m: r.method === base.method ? r.pattern.exec(path) : null }))
            .find((x) => x.m);
          const request: StandInRequest = { ...base, params: match?.m?.slice(1) ?? [] };
          requests.push(request);
          try {
            reply = match ? await match.r.handler(request) : unipileError(404, 'resource_not_found', 'Not found');
          } catch (err) {
            reply = unipileError(500, 'unexpected_error', 'Unexpected error', String(err));
          }
        }
        const isBuffer = Buffer.isBuffer(reply.body);
        res.writeHead(reply.status, {
          ...(reply.body === undefined || isBuffer ? {} : { 'content-type': 'application/json' }),
          ...reply.headers,
        });
        res.end(reply.body === undefined ? undefined : isBuffer ? reply.body : JSON.stringify(reply.body));
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiKey,
    requests,
    route: (method, pattern, handler) => routes.push({ method, pattern, handler }),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The fields of a multipart/form-data body (files are kept as their text: the stand-in never needs their bytes). */
async function parseForm(body: Buffer, contentType: string): Promise<Record<string, string | string[]>> {
  const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of form.entries()) {
    const v = typeof value === 'string' ? value : await value.text();
    const prev = out[name];
    out[name] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}
