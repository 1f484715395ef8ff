// Our webhooks at Unipile (/work/unipile-notes.md §8): one per source — `messaging`
// (message_received), `users` (new_relation), `account_status` — all to
// `<publicBaseUrl>/hooks/connector` (the connector's hook route), created with `POST /webhooks` when missing (found by name
// and URL in `GET /webhooks`, so another environment's webhooks on the same Unipile tenant are left
// alone). API-created webhooks carry no JSON content type unless told, and Unipile signs nothing:
// each is created with `Content-Type: application/json` and our secret header.
import { z } from 'zod';
import { parseWire, type JsonHttpClient } from '../../provider-http.js';
import { UNIPILE_SECRET_HEADER } from './events.js';
import { listOf, query, text, uid } from './wire.js';

/** Where Unipile's webhooks are delivered (api/hooks/routes.ts), under our public base URL. */
export const UNIPILE_WEBHOOK_PATH = '/hooks/connector';

export const WEBHOOK_SOURCES = ['messaging', 'users', 'account_status'] as const;
export type WebhookSource = (typeof WEBHOOK_SOURCES)[number];

/** The name of our webhook of a source (how `ensureWebhooks` recognises it). */
export const webhookName = (source: WebhookSource) => `outreach-${source}`;

const webhookItem = z.object({ id: uid, name: text(500), request_url: text(4096) });
const webhookList = listOf(webhookItem);
const webhookCreated = z.object({ webhook_id: uid });

export interface EnsuredWebhooks {
  requestUrl: string;
  created: { source: WebhookSource; webhookId: string }[];
  existing: { source: WebhookSource; webhookId: string }[];
}

/** Creates whichever of our three webhooks is missing; idempotent. */
export async function ensureWebhooks(
  http: JsonHttpClient,
  opts: { publicBaseUrl: string; secret: string },
  signal?: AbortSignal,
): Promise<EnsuredWebhooks> {
  const requestUrl = `${opts.publicBaseUrl.replace(/\/+$/, '')}${UNIPILE_WEBHOOK_PATH}`;
  const have = new Map<string, string>();
  let cursor: string | null = null;
  for (let n = 0; n < 20; n++) {
    const raw = await http.json('GET', 'webhooks', { query: query({ cursor }), signal });
    const page: z.infer<typeof webhookList> = parseWire(http, webhookList, raw);
    for (const w of page.items) if (w.name && w.request_url === requestUrl) have.set(w.name, w.id);
    if (!page.cursor) break;
    cursor = page.cursor;
  }
  const out: EnsuredWebhooks = { requestUrl, created: [], existing: [] };
  for (const source of WEBHOOK_SOURCES) {
    const name = webhookName(source);
    const id = have.get(name);
    if (id) {
      out.existing.push({ source, webhookId: id });
      continue;
    }
    const body = {
      source,
      request_url: requestUrl,
      name,
      format: 'json',
      ...(source === 'messaging' ? { events: ['message_received'] } : {}),
      headers: [
        { key: 'Content-Type', value: 'application/json' },
        { key: UNIPILE_SECRET_HEADER, value: opts.secret },
      ],
    };
    const r = parseWire(http, webhookCreated, await http.json('POST', 'webhooks', { body, signal }));
    out.created.push({ source, webhookId: r.webhook_id });
  }
  return out;
}
