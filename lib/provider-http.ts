// The HTTP exchange every real provider adapter shares (discovery sources, enrichment, connectors):
// one JSON request with a deadline, a bounded response body, no redirects, and every failure mapped
// to a ProviderError (or the adapter's subclass of it).
//
// The base URLs are operator configuration, not customer input, so this does not go through the
// guarded client (lib/outbound-http.ts) and may reach private hosts. It still never follows a
// redirect (undici's request() does not, and a 3xx is a bad_response), so a provider cannot send
// the API key's requests elsewhere, and it never reads more than `maxResponseBytes`.
import { Agent, request, type FormData } from 'undici';
import type { z } from 'zod';

export interface HttpProviderOptions {
  baseUrl: string;
  apiKey: string;
  /** Deadline for the whole exchange (connect, headers, body). Default 15 s. */
  timeoutMs?: number;
  /** Larger responses are refused as bad_response. Default 4 MiB. */
  maxResponseBytes?: number;
  /** The header the key goes in (default `authorization: Bearer <key>`; Unipile: `x-api-key`); null: a service without keys (HN Search), no key header. */
  keyHeader?: string | null;
  /**
   * A provider that explains its refusals in the body (Unipile's `{ type: "errors/…" }`): the error
   * for a non-2xx answer, given its status, its JSON body (null when not JSON, at most 64 KiB read)
   * and Retry-After (and all the answer's headers, for services that name their reset elsewhere: Cal.com's
   * `X-RateLimit-Reset-*`); null leaves it to the default mapping by status.
   */
  errorOf?: (
    status: number,
    body: unknown,
    retryAfterSeconds: number | null,
    headers: Readonly<Record<string, string | string[] | undefined>>,
  ) => ProviderError | null;
}

const USER_AGENT = 'outreach-api-providers/1';

/** `quota_exhausted`: the plan's allowance at the service is used up (Hunter's monthly searches); not retried, unlike `rate_limited`. */
export type ProviderErrorCode =
  'auth' | 'rate_limited' | 'quota_exhausted' | 'unavailable' | 'bad_response' | 'timeout' | 'invalid_request';

/** Whether retrying the same call later may succeed. */
export const RETRYABLE_CODES: ReadonlySet<ProviderErrorCode> = new Set(['rate_limited', 'unavailable', 'timeout']);

export interface ProviderErrorDetails {
  status?: number;
  retryAfterSeconds?: number | null;
  /** The provider's own reason, finer than `code` (the mail connector's `blocked_destination`, `tls_failed`, …). */
  reason?: string;
  /** A connector: the sender account itself is lost and must be reconnected (domain/accounts/refusals.ts disconnects it). */
  accountLost?: boolean;
}

/** Every failure of a third-party provider, whatever its transport. */
export class ProviderError extends Error {
  readonly retryable: boolean;
  constructor(
    readonly provider: string,
    readonly code: ProviderErrorCode,
    message: string,
    readonly details: ProviderErrorDetails = {},
  ) {
    super(`${provider}: ${code}: ${message}`);
    this.name = 'ProviderError';
    this.retryable = RETRYABLE_CODES.has(code);
  }

  get retryAfterSeconds(): number | null {
    return this.details.retryAfterSeconds ?? null;
  }
}

/** How an adapter builds its errors (a subclass of ProviderError, e.g. SourceError). */
export type ErrorFactory = (code: ProviderErrorCode, message: string, details?: ProviderErrorDetails) => ProviderError;

export class JsonHttpClient {
  private readonly base: URL;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly agent: Agent;
  private readonly keyHeaders: Record<string, string>;

  private readonly error: ErrorFactory;

  constructor(
    readonly provider: string,
    private readonly opts: HttpProviderOptions,
    error?: ErrorFactory,
  ) {
    this.error = error ?? ((code, message, details) => new ProviderError(provider, code, message, details));
    this.base = new URL(opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`);
    this.timeoutMs = opts.timeoutMs ?? 15_000;
    this.maxBytes = opts.maxResponseBytes ?? 4 * 1024 * 1024;
    this.keyHeaders =
      opts.keyHeader === null
        ? {}
        : opts.keyHeader
          ? { [opts.keyHeader]: opts.apiKey }
          : { authorization: `Bearer ${opts.apiKey}` };
    this.agent = new Agent({
      connect: { timeout: this.timeoutMs },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
  }

  /**
   * Sends the request and returns the parsed JSON body of a 2xx answer, or null for a 404 when
   * `notFoundIsNull` and for a 204. `path` is relative to the base URL (keeps its path prefix).
   * `headers` adds request headers (e.g. `Idempotency-Key`, or another `authorization`); `form`
   * sends an `application/x-www-form-urlencoded` body instead of JSON (OAuth token endpoints);
   * `multipart` a `multipart/form-data` one (Unipile's message sends).
   */
  async json(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    opts: {
      query?: URLSearchParams;
      body?: unknown;
      form?: URLSearchParams;
      multipart?: FormData;
      signal?: AbortSignal;
      notFoundIsNull?: boolean;
      headers?: Record<string, string>;
    } = {},
  ): Promise<unknown> {
    const url = new URL(path.replace(/^\//, ''), this.base);
    if (opts.query) url.search = opts.query.toString();
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, {
        method,
        dispatcher: this.agent,
        signal,
        headers: {
          ...this.keyHeaders,
          accept: 'application/json',
          'user-agent': USER_AGENT,
          ...opts.headers,
          ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(opts.form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        // A FormData body sets its own multipart content type (with the boundary).
        body:
          opts.multipart !== undefined
            ? opts.multipart
            : opts.form !== undefined
              ? opts.form.toString()
              : opts.body === undefined
                ? undefined
                : JSON.stringify(opts.body),
      });
    } catch (err) {
      throw this.transportError(err, opts.signal);
    }
    const status = res.statusCode;
    if (status < 200 || status >= 300) {
      const explained = await this.explained(res);
      if (status === 404 && opts.notFoundIsNull) return null;
      throw explained ?? this.statusError(status, res.headers['retry-after']);
    }
    if (status === 204) {
      await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
      return null;
    }
    const text = await this.readBody(res, opts.signal);
    try {
      return JSON.parse(text);
    } catch {
      throw this.error('bad_response', 'response is not valid JSON', { status });
    }
  }

  private async readBody(res: Awaited<ReturnType<typeof request>>, callerSignal?: AbortSignal): Promise<string> {
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.maxBytes) {
      res.body.destroy();
      throw this.error('bad_response', `response larger than ${this.maxBytes} bytes`, { status: res.statusCode });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > this.maxBytes) {
          res.body.destroy();
          throw this.error('bad_response', `response larger than ${this.maxBytes} bytes`, { status: res.statusCode });
        }
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      throw this.transportError(err, callerSignal);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  /** The provider's own error for a non-2xx answer (`errorOf`), reading at most 64 KiB of its body; else null (the body is dropped). */
  private async explained(res: Awaited<ReturnType<typeof request>>): Promise<ProviderError | null> {
    if (!this.opts.errorOf) {
      await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
      return null;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > 64 * 1024) {
          res.body.destroy();
          break;
        }
        chunks.push(chunk as Buffer);
      }
    } catch {
      // unreadable: judged by its status alone
    }
    let body: unknown = null;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = null;
    }
    const h = res.headers['retry-after'];
    return this.opts.errorOf(res.statusCode, body, parseRetryAfter(Array.isArray(h) ? h[0] : h), res.headers);
  }

  private statusError(status: number, retryAfterHeader: string | string[] | undefined): ProviderError {
    const retryAfterSeconds = parseRetryAfter(Array.isArray(retryAfterHeader) ? retryAfterHeader[0] : retryAfterHeader);
    if (status === 401 || status === 403)
      return this.error('auth', `HTTP ${status}: the API key was refused`, { status });
    if (status === 429) return this.error('rate_limited', 'HTTP 429', { status, retryAfterSeconds });
    if (status === 408) return this.error('timeout', 'HTTP 408', { status });
    if (status >= 500) return this.error('unavailable', `HTTP ${status}`, { status, retryAfterSeconds });
    if (status === 400 || status === 422)
      return this.error('invalid_request', `HTTP ${status}: the provider refused the query`, { status });
    if (status >= 300 && status < 400)
      return this.error('bad_response', `HTTP ${status} (redirects are not followed)`, { status });
    return this.error('bad_response', `HTTP ${status}`, { status });
  }

  /** The caller's own abort is passed through untouched (activity cancellation); the rest is mapped. */
  private transportError(err: unknown, callerSignal?: AbortSignal): unknown {
    if (callerSignal?.aborted) return callerSignal.reason;
    const chain: unknown[] = [];
    for (let e = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) chain.push(e);
    const names = chain.map((e) => `${(e as Error)?.name ?? ''} ${(e as { code?: string })?.code ?? ''}`).join(' ');
    if (/TimeoutError|TIMEOUT/.test(names))
      return this.error('timeout', `no complete response within ${this.timeoutMs} ms`);
    const code = (chain.find((e) => (e as { code?: string })?.code) as { code?: string } | undefined)?.code ?? 'error';
    return this.error('unavailable', `${code}: ${(err as Error)?.message ?? 'request failed'}`.slice(0, 300));
  }

  /**
   * A GET whose 2xx body is handed over as a stream (never buffered): the caller reads at most
   * `maxBytes` (a larger declared length is refused at once; a body that grows past it fails the
   * stream with bad_response). The deadline covers the headers; the body then has `timeoutMs` per read.
   */
  async stream(
    path: string,
    opts: { signal?: AbortSignal; maxBytes: number },
  ): Promise<{
    contentType: string | null;
    size: number | null;
    disposition: string | null;
    body: AsyncIterable<Buffer>;
  }> {
    const url = new URL(path.replace(/^\//, ''), this.base);
    const headersDeadline = AbortSignal.timeout(this.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, headersDeadline]) : headersDeadline;
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, {
        method: 'GET',
        dispatcher: this.agent,
        signal,
        headers: { ...this.keyHeaders, 'user-agent': USER_AGENT },
      });
    } catch (err) {
      throw this.transportError(err, opts.signal);
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const explained = await this.explained(res);
      if (explained) throw explained;
      throw res.statusCode === 404
        ? this.error('invalid_request', 'HTTP 404: not found', { status: 404 })
        : this.statusError(res.statusCode, res.headers['retry-after']);
    }
    const header = (name: string) => {
      const v = res.headers[name];
      return (Array.isArray(v) ? v[0] : v) ?? null;
    };
    const declared = Number(header('content-length') ?? NaN);
    const source = res.body;
    // Destroying an unread body emits an abort error: nobody awaits it any more.
    source.on('error', () => {});
    if (Number.isFinite(declared) && declared > opts.maxBytes) {
      source.destroy();
      throw this.error('bad_response', `response larger than ${opts.maxBytes} bytes`, { status: res.statusCode });
    }
    const fail = this.error;
    async function* capped(): AsyncIterable<Buffer> {
      let size = 0;
      for await (const chunk of source) {
        size += (chunk as Buffer).length;
        if (size > opts.maxBytes) {
          source.destroy();
          throw fail('bad_response', `response larger than ${opts.maxBytes} bytes`);
        }
        yield chunk as Buffer;
      }
    }
    return {
      contentType: header('content-type'),
      size: Number.isFinite(declared) ? declared : null,
      disposition: header('content-disposition'),
      body: capped(),
    };
  }

  /** An error of this client's provider (for adapters validating what they read). */
  fail(code: ProviderErrorCode, message: string, details?: ProviderErrorDetails): ProviderError {
    return this.error(code, message, details);
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** Retry-After as seconds: an integer, or an HTTP date (seconds from now, at least 0). Null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d{1,9}$/.test(v)) return Number(v);
  const at = /[a-z]/i.test(v) ? Date.parse(v) : NaN; // an HTTP date names its month; Date.parse('-5') would not fail
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** "Ada Lovelace" → ["Ada", "Lovelace"]; a heuristic for providers that only give a full name. */
export function splitName(full: string): { firstName: string | null; lastName: string | null } {
  const parts = full.trim().split(/\s+/).filter(Boolean);
  if (parts.length === 0) return { firstName: null, lastName: null };
  return { firstName: parts[0], lastName: parts.length > 1 ? parts.slice(1).join(' ') : null };
}

/** Validates a provider's JSON against its wire schema; a mismatch is a bad_response naming the first problem. */
export function parseWire<T extends z.ZodType>(
  client: Pick<JsonHttpClient, 'fail'>,
  schema: T,
  raw: unknown,
): z.infer<T> {
  const r = schema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw client.fail(
      'bad_response',
      `unexpected response shape at ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  return r.data;
}
