// The enrichment provider a process uses: Hunter's API when ENRICHMENT_PROVIDER=hunter, else answered
// from the local generated corpus (the default, so everything runs offline).
import type { EnrichmentConfig } from '../config.js';
import type { CorpusOptions } from '../sources/local-corpus.js';
import { HunterEnrichment } from './hunter.js';
import { LocalEnrichment } from './local.js';
import type { EnrichmentProvider } from './types.js';

export * from './types.js';
export { HunterEnrichment } from './hunter.js';
export { LocalEnrichment } from './local.js';

export function createEnrichment(config: EnrichmentConfig, corpus: CorpusOptions): EnrichmentProvider {
  return config.provider === 'hunter' && config.hunter
    ? new HunterEnrichment({ ...config.hunter, timeoutMs: config.timeoutMs })
    : new LocalEnrichment(corpus);
}
