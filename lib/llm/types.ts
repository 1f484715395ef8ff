// The model adapter: the one door every AI feature goes through. Two implementations sit behind it
// (lib/llm/openai.ts for any OpenAI-compatible server, lib/llm/local.ts offline and deterministic);
// lib/llm/index.ts picks one from the configuration.
import type { z } from 'zod';

/** Token counts and cost of one call. Integers: money in this project is always an integer (micros of a USD). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  costMicros: number;
}

/** What is asked. The local model answers by task; a remote model sees it as the schema's name. */
export type Task = 'keywords' | 'qualify' | 'icp' | 'product_profile' | 'queries' | 'chat' | (string & {});

export interface StructuredRequest<T> {
  task: Task;
  /** Instructions; a short default per task is used when absent. */
  system?: string;
  /** The material: text, or an object sent as JSON. */
  input: string | object;
  /** The answer must satisfy it (validated on every implementation). */
  schema: z.ZodType<T>;
  maxTokens?: number;
  signal?: AbortSignal;
}

export interface StructuredResult<T> {
  value: T;
  usage: Usage;
}

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments the model produced, parsed from JSON. */
  args: unknown;
}

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** A tool offered to the model. `parameters` is a JSON Schema object (e.g. from z.toJSONSchema). */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface StreamRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  maxTokens?: number;
  signal?: AbortSignal;
}

/** Text arrives in deltas; a tool call only once it is complete; `done` is always last. */
export type StreamEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'done'; usage: Usage; finishReason: string };

export interface ModelAdapter {
  /** The implementation: 'openai' (any OpenAI-compatible server) or 'local'. */
  readonly name: string;
  /** The model answering, as recorded on specialist runs. */
  readonly model: string;
  structured<T>(req: StructuredRequest<T>): Promise<StructuredResult<T>>;
  stream(req: StreamRequest): AsyncIterable<StreamEvent>;
}

export type LlmErrorCode =
  | 'auth' // 401/403: key missing, wrong or not allowed
  | 'rate_limited' // 429
  | 'unavailable' // 5xx, connection refused or reset
  | 'timeout' // no complete answer within LLM_TIMEOUT_MS
  | 'aborted' // the caller's AbortSignal fired
  | 'bad_request' // any other 4xx: the request itself was refused
  | 'invalid_response' // the server's reply is not the Chat Completions wire format
  | 'invalid_output' // the model's answer is not JSON or fails the schema
  | 'unsupported_task'; // the local model cannot answer this task with this schema

/** The only error the adapters throw. Messages never contain the API key. */
export class LlmError extends Error {
  constructor(
    readonly code: LlmErrorCode,
    message: string,
    /** HTTP status from the provider, when there was one. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'LlmError';
  }

  /** Worth retrying later (e.g. by a Temporal activity retry policy). */
  get retryable(): boolean {
    return this.code === 'rate_limited' || this.code === 'unavailable' || this.code === 'timeout';
  }
}

export const ZERO_USAGE: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0, costMicros: 0 });

/** Drains a stream into its text, its complete tool calls and its usage (for callers that need no deltas). */
export async function collectStream(
  events: AsyncIterable<StreamEvent>,
): Promise<{ text: string; toolCalls: ToolCall[]; usage: Usage; finishReason: string }> {
  let text = '';
  const toolCalls: ToolCall[] = [];
  let usage = ZERO_USAGE;
  let finishReason = 'stop';
  for await (const e of events) {
    if (e.type === 'text') text += e.delta;
    else if (e.type === 'tool_call') toolCalls.push(e.call);
    else ({ usage, finishReason } = e);
  }
  return { text, toolCalls, usage, finishReason };
}
