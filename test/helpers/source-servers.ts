// Local HTTP servers for the adapters' tests, without a network: `startServer` records every request
// and lets the test answer it (errors, stalls, redirects); `newsforumHandler` speaks the newsforum
// wire format (docs/sources.md) from the local source.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalNewsforum } from '../../lib/sources/local.js';
import { SourceError, type Candidate, type SignalQuery } from '../../lib/sources/types.js';

export interface WireRequest {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface WireServer {
  url: string;
  requests: WireRequest[];
  close(): Promise<void>;
}

type Handler = (req: WireRequest, res: ServerResponse) => Promise<void> | void;

export async function startServer(handler: Handler): Promise<WireServer> {
  const requests: WireRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString();
      const wire: WireRequest = {
        method: req.method ?? '',
        url: new URL(req.url ?? '/', 'http://x'),
        headers: req.headers,
        body: raw ? JSON.parse(raw) : undefined,
      };
      requests.push(wire);
      try {
        await handler(wire, res);
      } catch (err) {
        if (!res.headersSent) res.writeHead(500).end(String(err));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

function authorised(req: WireRequest, res: ServerResponse, apiKey: string): boolean {
  if (req.headers.authorization === `Bearer ${apiKey}`) return true;
  sendJson(res, 401, { error: 'unauthorized' });
  return false;
}

function refused(res: ServerResponse, err: unknown) {
  if (err instanceof SourceError && err.code === 'invalid_request') return sendJson(res, 400, { error: err.message });
  throw err;
}

/** newsforum v1 over a local newsforum source. */
export function newsforumHandler(source: LocalNewsforum, apiKey: string, prefix = ''): Handler {
  return async (req, res) => {
    if (!authorised(req, res, apiKey)) return;
    if (req.method === 'GET' && req.url.pathname === `${prefix}/v1/search`) {
      const p = req.url.searchParams;
      const since = p.get('since');
      const query: SignalQuery = { kind: 'post_keywords', keywords: p.getAll('q'), filters: since ? { since } : {} };
      try {
        const page = await source.search(query, {
          cursor: p.get('after') ?? undefined,
          limit: Number(p.get('limit') ?? 50),
        });
        return sendJson(res, 200, { items: page.candidates.map(forumItem), next: page.nextCursor });
      } catch (err) {
        return refused(res, err);
      }
    }
    if (req.method === 'GET' && req.url.pathname === `${prefix}/v1/users/by-url`) {
      const c = await source.profile(req.url.searchParams.get('url') ?? '');
      return c ? sendJson(res, 200, { user: forumAuthor(c) }) : sendJson(res, 404, { error: 'not_found' });
    }
    sendJson(res, 404, { error: 'not_found' });
  };
}

const forumAuthor = (c: Candidate) => ({
  id: c.externalId,
  name: c.fullName,
  profile_url: null,
  network_profile_url: c.profileUrl,
  headline: c.headline,
  title: c.title,
  company: c.company?.name ?? null,
  country: c.country,
});

const forumItem = (c: Candidate) => ({
  id: c.evidence.id,
  kind: c.evidence.id.startsWith('nf_c') ? 'comment' : 'post',
  parent_id: null,
  author: forumAuthor(c),
  text: c.evidence.text,
  url: c.evidence.url,
  created_at: c.evidence.date,
});
