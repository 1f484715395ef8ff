// The sandbox network: the local generated corpus seen as a professional network, so offline runs
// find profiles. It matches people exactly as the local enrichment does (lib/enrichment/local.ts):
// by profile URL (confirming it exists), else email, else full name with company name or domain.
import { CorpusPeople } from '../enrichment/local.js';
import type { CorpusOptions } from '../sources/local-corpus.js';
import type { NetworkConnector, NetworkProfile, ProfileQuery } from './types.js';

export class SandboxConnector implements NetworkConnector {
  readonly name = 'sandbox';
  private readonly people: CorpusPeople;

  constructor(corpusOptions: CorpusOptions) {
    this.people = new CorpusPeople(corpusOptions);
  }

  async findProfile(query: ProfileQuery, signal?: AbortSignal): Promise<NetworkProfile | null> {
    signal?.throwIfAborted();
    const match = this.people.match(query);
    if (!match) return null;
    const { people, companies } = this.people.corpus;
    const p = people[match.person];
    return {
      profileUrl: p.profileUrl,
      providerId: p.id,
      fullName: p.fullName,
      firstName: p.firstName,
      lastName: p.lastName,
      headline: p.headline,
      title: p.title,
      // A former employer is not the profile's company (its headline says "formerly at").
      company: p.current ? companies[p.company].name : null,
      country: p.country,
    };
  }
}
