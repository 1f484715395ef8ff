// The Operator's live events: the turn workflow's activities append them to a Redis stream per turn
// (`operator:turn:<turnId>`), and the API's server-sent-event responses read them (docs/operator.md,
// "The stream"). Redis is only the pipe: everything that matters is also in PostgreSQL, so a lost
// event costs a live update, never a result (the reader falls back to the turn's row).
import { Redis } from 'ioredis';

/** The connection a turn's events are published on (domain code names it without importing ioredis). */
export type TurnStream = Redis;

export const STREAM_EVENTS = [
  'turn',
  'message_delta',
  'message',
  'tool_call',
  'tool_result',
  'approval_required',
  'done',
  'error',
] as const;
export type StreamEventName = (typeof STREAM_EVENTS)[number];

/** Events after which the turn has nothing more to say on this response. */
export const FINAL_EVENTS: ReadonlySet<StreamEventName> = new Set(['done', 'error', 'approval_required']);

export interface TurnEvent {
  /** Redis stream entry id (`<ms>-<n>`): the SSE `id:` field. */
  id: string;
  event: StreamEventName;
  data: Record<string, unknown>;
}

const key = (turnId: string) => `operator:turn:${turnId}`;
/** A turn's events live this long after the last one (enough to resume after an approval). */
const TTL_SECONDS = 2 * 60 * 60;
const MAX_EVENTS = 10_000;

/** Appends one event; never throws (a live update is not worth failing a turn for). */
export async function publishTurnEvent(
  redis: Redis,
  turnId: string,
  event: StreamEventName,
  data: Record<string, unknown>,
): Promise<string | null> {
  try {
    const [[, id]] = (await redis
      .multi()
      .xadd(key(turnId), 'MAXLEN', '~', String(MAX_EVENTS), '*', 'e', event, 'd', JSON.stringify(data))
      .expire(key(turnId), TTL_SECONDS)
      .exec()) as [[Error | null, string]];
    return id;
  } catch {
    return null;
  }
}

/** The id of the turn's latest event ('0' when none): read after it to see only what comes next. */
export async function lastEventId(redis: Redis, turnId: string): Promise<string> {
  const last = (await redis.xrevrange(key(turnId), '+', '-', 'COUNT', 1)) as [string, string[]][];
  return last[0]?.[0] ?? '0';
}

/**
 * Reads the turn's events after `after`, waiting up to `blockMs` for the first; [] on timeout. Use a
 * connection of its own (`readerConnection`): a blocking read holds it.
 */
export async function readTurnEvents(
  reader: Redis,
  turnId: string,
  after: string,
  blockMs: number,
): Promise<TurnEvent[]> {
  const res = (await reader.xread('COUNT', 200, 'BLOCK', blockMs, 'STREAMS', key(turnId), after)) as
    [string, [string, string[]][]][] | null;
  if (!res) return [];
  return res[0][1].map(([id, fields]) => {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]] = fields[i + 1];
    return { id, event: f.e as StreamEventName, data: JSON.parse(f.d ?? '{}') as Record<string, unknown> };
  });
}

/** A connection for blocking reads: no command timeout (the block is the timeout), fails fast when Redis is down. */
export function readerConnection(url: string): Redis {
  const reader = new Redis(url, { enableOfflineQueue: true, maxRetriesPerRequest: 1, connectionName: 'operator-sse' });
  reader.on('error', () => {}); // a read that fails ends the stream with an `error` event (api/operator/sse.ts)
  return reader;
}
