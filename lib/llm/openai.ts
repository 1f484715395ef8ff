// The model adapter over any server speaking OpenAI's Chat Completions (OpenAI itself, Azure-style
// gateways, vLLM, Ollama, LiteLLM…), on the official `openai` client.
//
// Outbound HTTP: lib/outbound-http.ts guards destinations that *customers* choose. The model's base
// URL is operator configuration (like DATABASE_URL), so the client's own fetch is used here; it may
// well be a private address (a self-hosted model).
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { z } from 'zod';
import type { LlmConfig } from '../config.js';
import { TASK_INSTRUCTIONS } from './tasks.js';
import {
  LlmError,
  type ChatMessage,
  type ModelAdapter,
  type StreamEvent,
  type StreamRequest,
  type StructuredRequest,
  type StructuredResult,
  type ToolCall,
  type Usage,
} from './types.js';

/** An integer cost from integer prices per million tokens (rounded to the nearest micro). */
export function costOf(
  cfg: Pick<LlmConfig, 'priceInputPerMTokMicros' | 'priceOutputPerMTokMicros'>,
  inputTokens: number,
  outputTokens: number,
): number {
  return Math.round(
    (inputTokens * cfg.priceInputPerMTokMicros + outputTokens * cfg.priceOutputPerMTokMicros) / 1_000_000,
  );
}

/** The schema name OpenAI accepts: [a-zA-Z0-9_-]{1,64}. */
const schemaName = (task: string) => task.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'answer';

/** The JSON Schema sent for a zod schema (without `$schema`, which strict mode does not need). */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return rest;
}

function toWire(m: ChatMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls?.length
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
              })),
            }
          : {}),
      };
    default:
      return { role: m.role, content: m.content };
  }
}

/**
 * The client's own timeout stops once response headers arrive; this one also covers the body. It
 * aborts when the caller's signal fires or when `ms` pass without `touch()`: a whole-call deadline for
 * structured output, an idle deadline (re-armed on every chunk) for streams.
 */
function deadline(ms: number, outer?: AbortSignal) {
  const ctl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const state = { signal: ctl.signal, timedOut: false, touch, done };
  function touch() {
    clearTimeout(timer);
    timer = setTimeout(() => {
      state.timedOut = true;
      ctl.abort();
    }, ms);
  }
  const onAbort = () => ctl.abort();
  function done() {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
  if (outer?.aborted) ctl.abort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  touch();
  return state;
}

export class OpenAiCompatibleAdapter implements ModelAdapter {
  readonly name = 'openai';
  readonly model: string;
  private readonly client: OpenAI;

  constructor(private readonly cfg: LlmConfig) {
    this.model = cfg.model;
    this.client = new OpenAI({
      // Servers without authentication (a local vLLM or Ollama) still get a placeholder: the client requires one.
      apiKey: cfg.apiKey || 'unused',
      baseURL: cfg.baseUrl ?? 'https://api.openai.com/v1',
      timeout: cfg.timeoutMs,
      maxRetries: cfg.maxRetries,
      // Never picked up from OPENAI_* variables: the configuration is LLM_*.
      organization: null,
      project: null,
      logLevel: 'off',
    });
  }

  private usage(u: { prompt_tokens?: number; completion_tokens?: number } | null | undefined): Usage {
    const inputTokens = u?.prompt_tokens ?? 0;
    const outputTokens = u?.completion_tokens ?? 0;
    return { inputTokens, outputTokens, costMicros: costOf(this.cfg, inputTokens, outputTokens) };
  }

  /** One error type out, with the key never in a message (a server might echo it back). */
  private toLlmError(err: unknown, d?: { timedOut: boolean; signal: AbortSignal }): LlmError {
    if (err instanceof LlmError) return err;
    if (d?.timedOut)
      return new LlmError('timeout', `no complete answer from the model server within ${this.cfg.timeoutMs} ms`);
    if (d?.signal.aborted) return new LlmError('aborted', 'the model call was aborted');
    const redact = (s: string) =>
      this.cfg.apiKey && this.cfg.apiKey.length >= 4 ? s.split(this.cfg.apiKey).join('[redacted]') : s;
    const msg = (prefix: string, e: unknown) =>
      redact(`${prefix}${e instanceof Error && e.message ? `: ${e.message}` : ''}`).slice(0, 1000);
    if (err instanceof APIUserAbortError) return new LlmError('aborted', 'the model call was aborted');
    if (err instanceof APIConnectionTimeoutError)
      return new LlmError('timeout', `no answer from the model server within ${this.cfg.timeoutMs} ms`);
    if (err instanceof APIConnectionError)
      return new LlmError('unavailable', msg('cannot reach the model server', err.cause ?? err));
    if (err instanceof APIError && err.status !== undefined) {
      const s = err.status;
      const code =
        s === 401 || s === 403
          ? 'auth'
          : s === 429
            ? 'rate_limited'
            : s >= 500
              ? 'unavailable'
              : s === 408
                ? 'timeout'
                : 'bad_request';
      return new LlmError(code, msg(`model server answered ${s}`, err), s);
    }
    if (err instanceof APIError)
      return new LlmError('invalid_response', msg('the model server sent an error event', err));
    // A 2xx body that is not JSON (the client's response.json() fails) or is missing its fields.
    if (err instanceof SyntaxError || err instanceof TypeError)
      return new LlmError('invalid_response', msg('the model server reply is not a Chat Completions response', err));
    return new LlmError('unavailable', msg('model call failed', err));
  }

  async structured<T>(req: StructuredRequest<T>): Promise<StructuredResult<T>> {
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: this.model,
      messages: [
        {
          role: 'system',
          content: req.system ?? TASK_INSTRUCTIONS[req.task] ?? 'Answer with JSON matching the schema.',
        },
        { role: 'user', content: typeof req.input === 'string' ? req.input : JSON.stringify(req.input) },
      ],
      response_format: {
        type: 'json_schema',
        json_schema: { name: schemaName(req.task), schema: jsonSchemaOf(req.schema), strict: true },
      },
      // max_tokens rather than max_completion_tokens: the one every compatible server understands.
      ...(req.maxTokens ? { max_tokens: req.maxTokens } : {}),
    };
    let res;
    const d = deadline(this.cfg.timeoutMs, req.signal);
    try {
      res = await this.client.chat.completions.create(body, { signal: d.signal });
    } catch (err) {
      throw this.toLlmError(err, d);
    } finally {
      d.done();
    }
    const message = res?.choices?.[0]?.message;
    if (!message) throw new LlmError('invalid_response', 'the model server reply has no choices[0].message');
    if (message.content == null)
      throw new LlmError(
        'invalid_output',
        message.refusal ? `the model refused: ${message.refusal.slice(0, 300)}` : 'the model returned no content',
      );
    let json: unknown;
    try {
      json = JSON.parse(message.content);
    } catch {
      throw new LlmError(
        'invalid_output',
        `the model's answer is not JSON (finish_reason ${res.choices[0].finish_reason})`,
      );
    }
    const parsed = req.schema.safeParse(json);
    if (!parsed.success) {
      const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
      throw new LlmError(
        'invalid_output',
        `the model's answer does not match the ${req.task} schema: ${issues.join('; ')}`,
      );
    }
    return { value: parsed.data, usage: this.usage(res.usage) };
  }

  async *stream(req: StreamRequest): AsyncIterable<StreamEvent> {
    // Tool call fragments arrive by index: the first carries id and name, later ones more of the
    // JSON arguments. A call is emitted once complete (at its finish_reason or the end of the stream).
    const pending = new Map<number, { id: string; name: string; args: string }>();
    let finishReason = 'stop';
    let usage: Usage = this.usage(undefined);
    const flush = function* (): Generator<StreamEvent> {
      for (const [index, p] of [...pending].sort((a, b) => a[0] - b[0])) {
        let args: unknown;
        try {
          args = p.args.trim() ? JSON.parse(p.args) : {};
        } catch {
          throw new LlmError('invalid_output', `the arguments of tool call ${p.name || index} are not JSON`);
        }
        const call: ToolCall = { id: p.id, name: p.name, args };
        yield { type: 'tool_call', call };
      }
      pending.clear();
    };
    const d = deadline(this.cfg.timeoutMs, req.signal);
    try {
      const chunks = await this.client.chat.completions.create(
        {
          model: this.model,
          messages: req.messages.map(toWire),
          stream: true,
          stream_options: { include_usage: true },
          ...(req.tools?.length
            ? {
                tools: req.tools.map((t) => ({
                  type: 'function' as const,
                  function: { name: t.name, description: t.description, parameters: t.parameters },
                })),
              }
            : {}),
          ...(req.maxTokens ? { max_tokens: req.maxTokens } : {}),
        },
        { signal: d.signal },
      );
      for await (const chunk of chunks as AsyncIterable<ChatCompletionChunk>) {
        d.touch();
        if (chunk.usage) usage = this.usage(chunk.usage);
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta ?? {};
        if (delta.content) yield { type: 'text', delta: delta.content };
        for (const tc of delta.tool_calls ?? []) {
          const p = pending.get(tc.index) ?? { id: '', name: '', args: '' };
          if (tc.id) p.id = tc.id;
          if (tc.function?.name) p.name += tc.function.name;
          if (tc.function?.arguments) p.args += tc.function.arguments;
          pending.set(tc.index, p);
        }
        if (choice.finish_reason) {
          finishReason = choice.finish_reason;
          yield* flush();
        }
      }
      // The client's stream ends quietly when aborted: a cut-off answer must not look complete.
      if (d.signal.aborted) throw new Error('stream aborted');
    } catch (err) {
      throw this.toLlmError(err, d);
    } finally {
      d.done();
    }
    yield* flush();
    yield { type: 'done', usage, finishReason };
  }
}
