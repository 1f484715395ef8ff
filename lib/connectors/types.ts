// The messaging-network connector contract (DESIGN.md "External providers"). This first part is
// what the discovered-leads issue needs: finding a person's professional-network profile. The
// accounts issue extends the same interface with accounts, sends, chats and inbound events.
import { ProviderError, type ProviderErrorCode, type ProviderErrorDetails } from '../provider-http.js';

/** Who to find on the professional network. */
export interface ProfileQuery {
  fullName: string | null;
  firstName: string | null;
  lastName: string | null;
  company: string | null;
  companyDomain: string | null;
  email: string | null;
  /** A profile URL already known (then the lookup confirms it and returns its data). */
  profileUrl: string | null;
}

export interface NetworkProfile {
  /** Normalisable professional-network profile URL. */
  profileUrl: string;
  /** The connector's id of the person (its "provider id"). */
  providerId: string;
  fullName: string;
  firstName: string | null;
  lastName: string | null;
  headline: string | null;
  title: string | null;
  company: string | null;
  country: string | null;
}

export interface NetworkConnector {
  /** 'sandbox' (the local default) or the HTTP connector's name. */
  readonly name: string;
  /** The best matching profile, or null when there is none. Throws ConnectorError (a ProviderError) on failure. */
  findProfile(query: ProfileQuery, signal?: AbortSignal): Promise<NetworkProfile | null>;
  close?(): Promise<void>;
}

/** Every failure of a connector, whatever its transport. */
export class ConnectorError extends ProviderError {
  constructor(provider: string, code: ProviderErrorCode, message: string, details: ProviderErrorDetails = {}) {
    super(provider, code, message, details);
    this.name = 'ConnectorError';
  }
}
