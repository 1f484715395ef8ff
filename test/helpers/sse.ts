// Reading a server-sent event stream in tests: every event with its name, id and parsed data, and the
// time each arrived.
import { api } from './api.js';

export interface SseEvent {
  event: string;
  id?: string;
  data: any;
  at: number;
}

export interface SseResponse {
  status: number;
  contentType: string | null;
  events: SseEvent[];
  comments: number;
  /** The JSON error body when the answer is not a stream. */
  error?: any;
}

export function parseSse(text: string, at = Date.now()): { events: SseEvent[]; comments: number } {
  const events: SseEvent[] = [];
  let comments = 0;
  for (const block of text.split('\n\n')) {
    if (!block.trim()) continue;
    const e: Partial<SseEvent> = { at };
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments++;
      else if (line.startsWith('event: ')) e.event = line.slice(7);
      else if (line.startsWith('id: ')) e.id = line.slice(4);
      else if (line.startsWith('data: ')) e.data = JSON.parse(line.slice(6));
    }
    if (e.event) events.push(e as SseEvent);
  }
  return { events, comments };
}

/** POSTs and reads the whole stream (until the server ends it), timestamping events as they arrive. */
export async function postSse(
  path: string,
  token: string,
  body: unknown,
  opts: { headers?: Record<string, string>; signal?: AbortSignal; onEvent?: (e: SseEvent) => void } = {},
): Promise<SseResponse> {
  const { base } = await api();
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...opts.headers },
    body: JSON.stringify(body),
    signal: opts.signal,
  });
  const contentType = res.headers.get('content-type');
  if (!contentType?.startsWith('text/event-stream'))
    return { status: res.status, contentType, events: [], comments: 0, error: await res.json().catch(() => undefined) };
  const events: SseEvent[] = [];
  let comments = 0;
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    const cut = buffer.lastIndexOf('\n\n');
    if (cut < 0) continue;
    const parsed = parseSse(buffer.slice(0, cut + 2));
    buffer = buffer.slice(cut + 2);
    comments += parsed.comments;
    for (const e of parsed.events) {
      events.push(e);
      opts.onEvent?.(e);
    }
  }
  return { status: res.status, contentType, events, comments };
}
