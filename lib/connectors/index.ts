// The messaging-network connector a process uses: over HTTP when CONNECTOR_BASE_URL is set, else the
// sandbox network over the local generated corpus (the default, so everything runs offline).
import type { Config } from '../config.js';
import { providerHttpOptions } from '../provider-http.js';
import type { CorpusOptions } from '../sources/local-corpus.js';
import { HttpConnector } from './http.js';
import { SandboxConnector } from './sandbox.js';
import type { NetworkConnector } from './types.js';

export * from './types.js';
export { HttpConnector } from './http.js';
export { SandboxConnector } from './sandbox.js';

export function createConnector(config: Config['connector'], corpus: CorpusOptions): NetworkConnector {
  return config.baseUrl ? new HttpConnector(providerHttpOptions('CONNECTOR', config)) : new SandboxConnector(corpus);
}
