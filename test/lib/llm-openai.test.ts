// The OpenAI-compatible adapter against a local server speaking the Chat Completions wire format:
// plain JSON, SSE streams with text and split tool calls, error statuses, malformed bodies, timeouts.
import test from 'ava';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { LlmConfig } from '../../lib/config.js';
import {
  collectStream,
  createModelAdapter,
  LlmError,
  LocalModelAdapter,
  OpenAiCompatibleAdapter,
  type LlmErrorCode,
  type StreamEvent,
} from '../../lib/llm/index.js';

const KEY = 'sk-test-0123456789abcdef';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
}
type Handler = (req: Seen, res: ServerResponse) => void;

/** A Chat Completions server whose answers come from `handlers`, one per request (the last repeats). */
async function server(t: { teardown(fn: () => void): void }, ...handlers: Handler[]) {
  const seen: Seen[] = [];
  const srv = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const s: Seen = {
      method: req.method!,
      url: req.url!,
      headers: req.headers,
      body: raw ? JSON.parse(raw) : undefined,
    };
    seen.push(s);
    handlers[Math.min(seen.length - 1, handlers.length - 1)](s, res);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    srv.closeAllConnections();
    srv.close();
  });
  return { base: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`, seen };
}

const config = (baseUrl: string, over: Partial<LlmConfig> = {}): LlmConfig => ({
  baseUrl,
  apiKey: KEY,
  model: 'test-model-1',
  timeoutMs: 5000,
  maxRetries: 0,
  priceInputPerMTokMicros: 150_000, // $0.15 per million input tokens
  priceOutputPerMTokMicros: 600_000,
  ...over,
});

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

const completion = (
  content: string | null,
  usage = { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 },
) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'test-model-1',
  choices: [
    { index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop', logprobs: null },
  ],
  usage,
});

/** An SSE response: one `data:` event per chunk, then `[DONE]`. */
const sse =
  (chunks: unknown[]): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
    res.end('data: [DONE]\n\n');
  };
const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
  id: 'chatcmpl-2',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'test-model-1',
  choices: [{ index: 0, delta, finish_reason }],
});
const usageChunk = (prompt: number, completion: number) => ({
  id: 'chatcmpl-2',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'test-model-1',
  choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
});

const Keywords = z.object({ keywords: z.array(z.string()) });

async function llmError(t: any, p: Promise<unknown> | AsyncIterable<unknown>): Promise<LlmError> {
  const run =
    Symbol.asyncIterator in (p as object) ? collectStream(p as AsyncIterable<StreamEvent>) : (p as Promise<unknown>);
  const err = await t.throwsAsync(run, { instanceOf: LlmError });
  t.false(String(err.message).includes(KEY), 'the key never appears in an error message');
  return err as LlmError;
}

test('structured output: the request carries model, json_schema response_format and the key; the answer is parsed, validated and priced', async (t) => {
  const s = await server(t, json(200, completion('{"keywords":["cold email","outbound"]}')));
  const llm = new OpenAiCompatibleAdapter(config(s.base));
  const r = await llm.structured({
    task: 'keywords',
    input: { text: 'Cold email for outbound teams' },
    schema: Keywords,
    maxTokens: 200,
  });
  t.deepEqual(r.value, { keywords: ['cold email', 'outbound'] });
  // 1200 × 0.15 + 300 × 0.60 = 180 + 180 micros of a dollar.
  t.deepEqual(r.usage, { inputTokens: 1200, outputTokens: 300, costMicros: 360 });

  t.is(s.seen.length, 1);
  const req = s.seen[0];
  t.is(req.method, 'POST');
  t.is(req.url, '/v1/chat/completions');
  t.is(req.headers.authorization, `Bearer ${KEY}`);
  t.is(req.body.model, 'test-model-1');
  t.is(req.body.max_tokens, 200);
  t.is(req.body.stream, undefined);
  t.is(req.body.response_format.type, 'json_schema');
  t.is(req.body.response_format.json_schema.name, 'keywords');
  t.true(req.body.response_format.json_schema.strict);
  t.like(req.body.response_format.json_schema.schema, {
    type: 'object',
    required: ['keywords'],
    additionalProperties: false,
  });
  t.is(req.body.response_format.json_schema.schema.$schema, undefined);
  t.is(req.body.messages[0].role, 'system');
  t.deepEqual(req.body.messages[1], { role: 'user', content: '{"text":"Cold email for outbound teams"}' });
});

test('an answer that fails the zod schema, or is not JSON, or is a refusal, is invalid_output', async (t) => {
  const s = await server(
    t,
    json(200, completion('{"keywords":"not a list"}')),
    json(200, completion('here are your keywords: a, b')),
    json(200, {
      ...completion(null),
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, refusal: 'I cannot help with that' },
          finish_reason: 'stop',
        },
      ],
    }),
  );
  const llm = new OpenAiCompatibleAdapter(config(s.base));
  const ask = () => llm.structured({ task: 'keywords', input: 'x', schema: Keywords });
  const e1 = await llmError(t, ask());
  t.is(e1.code, 'invalid_output');
  t.regex(e1.message, /keywords/);
  t.is((await llmError(t, ask())).code, 'invalid_output');
  const e3 = await llmError(t, ask());
  t.is(e3.code, 'invalid_output');
  t.regex(e3.message, /refused/);
});

test('HTTP errors map to one LlmError code each, without the key in the message', async (t) => {
  const cases: [number, LlmErrorCode][] = [
    [401, 'auth'],
    [403, 'auth'],
    [429, 'rate_limited'],
    [500, 'unavailable'],
    [503, 'unavailable'],
    [400, 'bad_request'],
    [404, 'bad_request'],
  ];
  for (const [status, code] of cases) {
    // The body echoes the key, as some gateways do: it must not reach our message.
    const s = await server(
      t,
      json(status, {
        error: { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error', code: null },
      }),
    );
    const err = await llmError(
      t,
      new OpenAiCompatibleAdapter(config(s.base)).structured({ task: 'keywords', input: 'x', schema: Keywords }),
    );
    t.is(err.code, code, `HTTP ${status}`);
    t.is(err.status, status);
    t.is(err.retryable, code === 'rate_limited' || code === 'unavailable');
  }
});

test('a 2xx body that is not JSON, or not a completion, is invalid_response', async (t) => {
  const s = await server(
    t,
    json(200, '{"id": "chatcmpl-1", "choices": [ {'),
    json(200, { id: 'x', object: 'chat.completion' }),
  );
  const llm = new OpenAiCompatibleAdapter(config(s.base));
  t.is(
    (await llmError(t, llm.structured({ task: 'keywords', input: 'x', schema: Keywords }))).code,
    'invalid_response',
  );
  t.is(
    (await llmError(t, llm.structured({ task: 'keywords', input: 'x', schema: Keywords }))).code,
    'invalid_response',
  );
});

test('no answer within the timeout is timeout; an aborted signal is aborted; a closed port is unavailable', async (t) => {
  const s = await server(t, () => {
    /* never answers */
  });
  const slow = new OpenAiCompatibleAdapter(config(s.base, { timeoutMs: 300 }));
  t.is((await llmError(t, slow.structured({ task: 'keywords', input: 'x', schema: Keywords }))).code, 'timeout');

  const ac = new AbortController();
  const pending = new OpenAiCompatibleAdapter(config(s.base)).structured({
    task: 'keywords',
    input: 'x',
    schema: Keywords,
    signal: ac.signal,
  });
  setTimeout(() => ac.abort(), 50);
  t.is((await llmError(t, pending)).code, 'aborted');

  // A port that was free a moment ago: nothing listens there.
  const gone = createServer();
  await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
  const freePort = (gone.address() as AddressInfo).port;
  await new Promise((r) => gone.close(r));
  const err = await llmError(
    t,
    new OpenAiCompatibleAdapter(config(`http://127.0.0.1:${freePort}/v1`)).structured({
      task: 'keywords',
      input: 'x',
      schema: Keywords,
    }),
  );
  t.is(err.code, 'unavailable');
});

test('the timeout also covers a body or a stream that stalls after the headers', async (t) => {
  const s = await server(
    t,
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id": "chatcmpl-1", "choices": ['); // and nothing more
    },
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ content: 'Hel' }))}\n\n`); // then silence
    },
  );
  // Long enough that a loaded machine still gets the first chunk through before the deadline.
  const llm = new OpenAiCompatibleAdapter(config(s.base, { timeoutMs: 1500 }));
  t.is((await llmError(t, llm.structured({ task: 'keywords', input: 'x', schema: Keywords }))).code, 'timeout');
  const seen: StreamEvent[] = [];
  const err = await t.throwsAsync(
    (async () => {
      for await (const e of llm.stream({ messages: [{ role: 'user', content: 'hi' }] })) seen.push(e);
    })(),
    { instanceOf: LlmError },
  );
  t.is(err.code, 'timeout');
  t.deepEqual(seen, [{ type: 'text', delta: 'Hel' }]);

  // The caller aborting mid-stream is `aborted`, not a quiet end.
  const ac = new AbortController();
  const err2 = await t.throwsAsync(
    (async () => {
      for await (const e of new OpenAiCompatibleAdapter(config(s.base)).stream({
        messages: [{ role: 'user', content: 'hi' }],
        signal: ac.signal,
      }))
        if (e.type === 'text') ac.abort();
    })(),
    { instanceOf: LlmError },
  );
  t.is(err2.code, 'aborted');
});

test('a retryable status is retried up to LLM_MAX_RETRIES', async (t) => {
  const s = await server(
    t,
    json(500, { error: { message: 'overloaded' } }, { 'retry-after-ms': '10' }),
    json(200, completion('{"keywords":["a"]}')),
  );
  const r = await new OpenAiCompatibleAdapter(config(s.base, { maxRetries: 1 })).structured({
    task: 'keywords',
    input: 'x',
    schema: Keywords,
  });
  t.deepEqual(r.value, { keywords: ['a'] });
  t.is(s.seen.length, 2);
});

test('streaming: text deltas in order, usage from the final chunk, stream_options sent', async (t) => {
  const s = await server(
    t,
    sse([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hello' }),
      chunk({ content: ', world' }),
      chunk({}, 'stop'),
      usageChunk(40, 5),
    ]),
  );
  const llm = new OpenAiCompatibleAdapter(config(s.base));
  const events: StreamEvent[] = [];
  for await (const e of llm.stream({
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ],
  }))
    events.push(e);
  t.deepEqual(events, [
    { type: 'text', delta: 'Hello' },
    { type: 'text', delta: ', world' },
    { type: 'done', usage: { inputTokens: 40, outputTokens: 5, costMicros: 9 }, finishReason: 'stop' },
  ]);
  const body = s.seen[0].body;
  t.true(body.stream);
  t.deepEqual(body.stream_options, { include_usage: true });
  t.is(body.tools, undefined);
  t.deepEqual(body.messages, [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'hi' },
  ]);
});

test('streaming: tool calls split across chunks are assembled by index and emitted complete', async (t) => {
  const s = await server(
    t,
    sse([
      chunk({ role: 'assistant', content: 'Let me check.' }),
      chunk({
        tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'list_agents', arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"app_' } }] }),
      chunk({
        tool_calls: [
          { index: 1, id: 'call_b', type: 'function', function: { name: 'get_funnel', arguments: '{"agent_id":' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'id":"a1","limit":5}' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '"g7"}' } }] }),
      chunk({}, 'tool_calls'),
      usageChunk(120, 30),
    ]),
  );
  const llm = new OpenAiCompatibleAdapter(config(s.base));
  const tools = [
    {
      name: 'list_agents',
      description: 'List discovery agents',
      parameters: { type: 'object', properties: { app_id: { type: 'string' }, limit: { type: 'integer' } } },
    },
    {
      name: 'get_funnel',
      description: 'Read a funnel',
      parameters: { type: 'object', properties: { agent_id: { type: 'string' } } },
    },
  ];
  const out = await collectStream(
    llm.stream({
      messages: [
        { role: 'user', content: 'list my agents' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'call_0', name: 'list_agents', args: {} }] },
        { role: 'tool', toolCallId: 'call_0', content: '[]' },
        { role: 'user', content: 'again, and the funnel' },
      ],
      tools,
    }),
  );
  t.is(out.text, 'Let me check.');
  t.deepEqual(out.toolCalls, [
    { id: 'call_a', name: 'list_agents', args: { app_id: 'a1', limit: 5 } },
    { id: 'call_b', name: 'get_funnel', args: { agent_id: 'g7' } },
  ]);
  t.is(out.finishReason, 'tool_calls');
  t.deepEqual(out.usage, { inputTokens: 120, outputTokens: 30, costMicros: 36 });
  const body = s.seen[0].body;
  t.deepEqual(body.tools[0], { type: 'function', function: tools[0] });
  t.deepEqual(body.messages[1], {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'list_agents', arguments: '{}' } }],
  });
  t.deepEqual(body.messages[2], { role: 'tool', tool_call_id: 'call_0', content: '[]' });
});

test('streaming errors: an error status before the stream, and tool arguments that are not JSON', async (t) => {
  const s = await server(
    t,
    json(429, { error: { message: 'slow down' } }),
    sse([
      chunk({ tool_calls: [{ index: 0, id: 'c', type: 'function', function: { name: 'x', arguments: '{"a":' } }] }),
      chunk({}, 'tool_calls'),
    ]),
  );
  const llm = new OpenAiCompatibleAdapter(config(s.base));
  t.is((await llmError(t, llm.stream({ messages: [{ role: 'user', content: 'hi' }] }))).code, 'rate_limited');
  t.is((await llmError(t, llm.stream({ messages: [{ role: 'user', content: 'hi' }] }))).code, 'invalid_output');
});

test('createModelAdapter: the local model unless a base URL or key is configured', (t) => {
  const base = config('');
  t.true(createModelAdapter({ ...base, baseUrl: null, apiKey: null }) instanceof LocalModelAdapter);
  t.true(
    createModelAdapter({ ...base, baseUrl: 'http://127.0.0.1:1/v1', apiKey: null }) instanceof OpenAiCompatibleAdapter,
  );
  const keyOnly = createModelAdapter({ ...base, baseUrl: null, apiKey: KEY });
  t.is(keyOnly.name, 'openai');
  t.is(keyOnly.model, 'test-model-1');
});
