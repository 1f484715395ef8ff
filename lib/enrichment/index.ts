// The enrichment provider a process uses: over HTTP when ENRICHMENT_BASE_URL is set, else answered
// from the local generated corpus (the default, so everything runs offline).
import type { Config } from '../config.js';
import { providerHttpOptions } from '../provider-http.js';
import type { CorpusOptions } from '../sources/local-corpus.js';
import { HttpEnrichment } from './http.js';
import { LocalEnrichment } from './local.js';
import type { EnrichmentProvider } from './types.js';

export * from './types.js';
export { HttpEnrichment } from './http.js';
export { LocalEnrichment } from './local.js';

export function createEnrichment(config: Config['enrichment'], corpus: CorpusOptions): EnrichmentProvider {
  return config.baseUrl ? new HttpEnrichment(providerHttpOptions('ENRICHMENT', config)) : new LocalEnrichment(corpus);
}
