// Server-sent events of one Operator turn, read from its Redis stream (lib/operator-stream.ts) and
// written until the turn says `done`, `error` or `approval_required`. Idle: a heartbeat comment every
// OPERATOR_HEARTBEAT_MS (15 s), and a look at the turn's row, so a turn whose events were lost still
// ends the response. When the client goes away, the read stops (the turn itself goes on in its
// workflow; its result is in the history).
import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import { AgentTurn } from '../../db/entities/AgentTurn.js';
import { FINAL_EVENTS, readerConnection, readTurnEvents, type StreamEventName } from '../../lib/operator-stream.js';
import type { Services } from '../services.js';
import { runtimeSettings } from '../../lib/config.js';

const heartbeatMs = runtimeSettings.operatorHeartbeatMs;

const frame = (event: StreamEventName, data: unknown, id?: string) =>
  `${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * Streams the turn's events after `after`; `first` is written at once (the API's own `turn` event).
 * `fail` ends the stream with an `error` event (e.g. the workflow could not be started).
 */
export function streamTurn(
  ctx: Context,
  services: Services,
  turnId: string,
  after: string,
  first?: { event: StreamEventName; data: unknown },
): { fail(code: string, message: string): void } {
  ctx.status = 200;
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.set('X-Accel-Buffering', 'no');
  const out = new PassThrough();
  ctx.body = out;
  if (first) out.write(frame(first.event, first.data));
  const reader = readerConnection(services.config.redisUrl);
  let closed = false;
  const stop = () => {
    closed = true;
    reader.disconnect();
  };
  ctx.req.on('close', stop);
  out.on('close', stop);
  const fail = (code: string, message: string) => {
    if (closed) return;
    out.write(frame('error', { turn_id: turnId, code, message }));
    stop();
    out.end();
  };

  void (async () => {
    let cursor = after;
    try {
      while (!closed) {
        const events = await readTurnEvents(reader, turnId, cursor, heartbeatMs());
        if (closed) break;
        if (!events.length) {
          out.write(': heartbeat\n\n');
          const final = await finalFromRow(services, turnId);
          if (final) {
            out.write(frame(final.event, final.data));
            break;
          }
          continue;
        }
        let finished = false;
        for (const e of events) {
          out.write(frame(e.event, e.data, e.id));
          cursor = e.id;
          if (FINAL_EVENTS.has(e.event)) finished = true;
        }
        if (finished) break;
      }
    } catch (err) {
      if (!closed) {
        services.logger.warn({ err: String(err), turnId }, 'operator stream read failed');
        out.write(
          frame('error', {
            turn_id: turnId,
            code: 'stream_unavailable',
            message: 'live events are unavailable; the turn goes on, see the thread history',
          }),
        );
      }
    } finally {
      stop();
      if (!out.writableEnded) out.end();
    }
  })();
  return { fail };
}

/** A finished turn whose final event never arrived: `done` / `error` from its row. */
async function finalFromRow(
  services: Services,
  turnId: string,
): Promise<{ event: StreamEventName; data: Record<string, unknown> } | null> {
  const turn = await services.orm.em.fork().findOne(AgentTurn, turnId);
  if (!turn)
    return { event: 'error', data: { turn_id: turnId, code: 'turn_not_found', message: 'the turn no longer exists' } };
  if (turn.status === 'completed') {
    return {
      event: 'done',
      data: {
        turn_id: turnId,
        usage: { input_tokens: turn.inputTokens, output_tokens: turn.outputTokens, model_calls: turn.modelCalls },
        cost_micros: Number(turn.costMicros),
        credits: turn.credits,
      },
    };
  }
  if (turn.status === 'failed')
    return {
      event: 'error',
      data: { turn_id: turnId, code: turn.errorCode ?? 'turn_failed', message: turn.errorMessage ?? '' },
    };
  return null;
}
