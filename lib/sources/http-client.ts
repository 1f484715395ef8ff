// The real source adapters' HTTP client: the shared provider client (lib/provider-http.ts) raising
// SourceErrors, so callers keep one error type per source.
import { JsonHttpClient, type HttpProviderOptions } from '../provider-http.js';
import { SourceError, type SourceName } from './types.js';

export { parseRetryAfter, parseWire, splitName } from '../provider-http.js';
export type HttpSourceOptions = HttpProviderOptions;

export const sourceClient = (source: SourceName, opts: HttpSourceOptions): JsonHttpClient =>
  new JsonHttpClient(source, opts, (code, message, details) => new SourceError(source, code, message, details));
