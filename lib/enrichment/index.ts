// The enrichment provider a process uses: over HTTP when ENRICHMENT_BASE_URL is set, else answered
// from the local generated corpus (the default, so everything runs offline).
import type { Config, ProviderConfig } from '../config.js';
import type { HttpProviderOptions } from '../provider-http.js';
import type { CorpusOptions } from '../sources/local-corpus.js';
import { HttpEnrichment } from './http.js';
import { LocalEnrichment } from './local.js';
import type { EnrichmentProvider } from './types.js';

export * from './types.js';
export { HttpEnrichment } from './http.js';
export { LocalEnrichment } from './local.js';

/** A provider's HTTP options from its config; `env` names its variables (ENRICHMENT → ENRICHMENT_BASE_URL). */
export function providerHttpOptions(env: string, conf: ProviderConfig): HttpProviderOptions {
  const invalid = new Error(`${env}_BASE_URL must be an absolute http(s) URL`);
  let url: URL;
  try {
    url = new URL(conf.baseUrl ?? '');
  } catch {
    throw invalid;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid;
  if (!conf.apiKey) throw new Error(`${env}_API_KEY is required when ${env}_BASE_URL is set`);
  return { baseUrl: url.toString(), apiKey: conf.apiKey, timeoutMs: conf.timeoutMs };
}

export function createEnrichment(config: Config['enrichment'], corpus: CorpusOptions): EnrichmentProvider {
  return config.baseUrl ? new HttpEnrichment(providerHttpOptions('ENRICHMENT', config)) : new LocalEnrichment(corpus);
}
