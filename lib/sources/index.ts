// The discovery sources a process uses, each answered from the local generated corpus by default (so
// everything runs offline): newsforum as Hacker News search when NEWSFORUM_PROVIDER=hn; pronet as
// LinkedIn search over Unipile when CONNECTOR_PROVIDER=unipile with UNIPILE_SEARCH_ACCOUNT_ID.
import type { SourcesConfig } from '../config.js';
import { HnAlgoliaNewsforum } from './hn-algolia.js';
import { MAX_CORPUS_PEOPLE } from './local-corpus.js';
import { LocalNewsforum, LocalPronet } from './local.js';
import { UnipilePronetSource } from './unipile-pronet.js';
import type { DiscoverySource, SignalKind, SourceName } from './types.js';

export * from './types.js';

export interface Sources {
  newsforum: DiscoverySource;
  pronet: DiscoverySource;
  get(name: SourceName): DiscoverySource;
  /** The sources that serve a signal kind (today exactly one per kind). */
  forKind(kind: SignalKind): DiscoverySource[];
  /** 'http' or 'local' per source, for logs and /readyz-style reporting. */
  modes: Record<SourceName, 'http' | 'local'>;
  close(): Promise<void>;
}

export function createSources(config: SourcesConfig): Sources {
  const corpus = { seed: config.corpus.seed, people: config.corpus.people };
  // The corpus is built on first use; a bad size should fail at start-up, not in the first run.
  if (corpus.people < 1 || corpus.people > MAX_CORPUS_PEOPLE)
    throw new Error(`CORPUS_PEOPLE must be from 1 to ${MAX_CORPUS_PEOPLE}`);
  const hn = config.newsforum.provider === 'hn' ? config.newsforum.hn : null;
  const newsforum = hn
    ? new HnAlgoliaNewsforum({
        baseUrl: hn.baseUrl,
        requestsPerHour: hn.requestsPerHour,
        windowDays: hn.windowDays,
        timeoutMs: config.timeoutMs,
      })
    : new LocalNewsforum(corpus);
  const unipile = config.pronet.unipile;
  const pronet = unipile
    ? new UnipilePronetSource({
        baseUrl: unipile.baseUrl,
        apiKey: unipile.apiKey,
        accountId: unipile.accountId,
        api: unipile.api,
        dailyProfiles: unipile.dailyProfiles ?? undefined,
        dailyProfileVisits: unipile.dailyProfileVisits ?? undefined,
        profileHosts: config.pronet.profileHosts,
        timeoutMs: config.timeoutMs,
      })
    : new LocalPronet(corpus);
  const all = { newsforum, pronet };
  return {
    ...all,
    get: (name) => all[name],
    forKind: (kind) => Object.values(all).filter((s) => s.supports(kind)),
    modes: {
      newsforum: newsforum instanceof HnAlgoliaNewsforum ? 'http' : 'local',
      pronet: pronet instanceof UnipilePronetSource ? 'http' : 'local',
    },
    async close() {
      await Promise.all(
        Object.values(all).map((s) => ('close' in s && typeof s.close === 'function' ? s.close() : undefined)),
      );
    },
  };
}
