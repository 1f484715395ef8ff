// The partner CRM behind one small interface (docs/partner.md): the OAuth authorization-code flow,
// the account the tokens belong to, and a batch upsert of our records, which answers per record:
// pushed, unchanged, held back because a person must decide (a field conflict, a possible
// duplicate), or rejected by the partner (its reason kept for a person).
import { ProviderError, type ProviderErrorCode, type ProviderErrorDetails } from '../provider-http.js';

export const PARTNER_RECORD_KINDS = ['lead', 'reply', 'meeting'] as const;
export type PartnerRecordKind = (typeof PARTNER_RECORD_KINDS)[number];

export type PartnerFieldValue = string | number | boolean | null;

/** How a record held back earlier is pushed once a person decided (partner events, `confirm`). */
export type PartnerResolve =
  /** Our values win, the partner's person-edited fields included. */
  | { mode: 'overwrite' }
  /** Attach our external id to the partner's existing record (a duplicate confirmed as the same). */
  | { mode: 'link'; partnerId: string }
  /** Create a separate record although the partner suspected a duplicate. */
  | { mode: 'create' };

export interface PartnerRecord {
  kind: PartnerRecordKind;
  /** Our id: what the partner's answer and its id are kept under, so a repeated push updates rather than duplicates. */
  externalId: string;
  fields: Record<string, PartnerFieldValue>;
  resolve?: PartnerResolve;
}

export interface PartnerConflictField {
  field: string;
  ours: PartnerFieldValue;
  theirs: PartnerFieldValue;
}

export type PartnerResult =
  | { externalId: string; status: 'upserted' | 'unchanged'; partnerId: string }
  | { externalId: string; status: 'conflict'; partnerId: string; conflicts: PartnerConflictField[] }
  | {
      externalId: string;
      status: 'duplicate';
      candidate: { partnerId: string; match: string; fields: Record<string, PartnerFieldValue> };
    }
  /** The partner refused this record (its other records went through): `reason` is the partner's category. */
  | { externalId: string; status: 'rejected'; error: { reason: string; message: string } };

export interface PartnerTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
}

export interface PartnerAccount {
  accountId: string;
  name: string | null;
}

/**
 * The ids the partner gave, kept per integration (partner_pushes): our records' (kind `lead`,
 * `reply`, `meeting`, keyed by our id) and the adapter's own (its kinds, keyed by any string: HubSpot's
 * companies by domain, contacts by our contact id), so later pushes update what exists.
 */
export interface PartnerIdStore {
  get(kind: string, keys: readonly string[]): Promise<Map<string, string>>;
  put(kind: string, ids: ReadonlyMap<string, string>): Promise<void>;
  /** Ids the partner no longer knows (deleted there): the next push makes or finds the record again. */
  forget(kind: string, keys: readonly string[]): Promise<void>;
}

/** What one batch of calls for an installation needs. */
export interface PartnerSession {
  /** The partner account the tokens belong to: the unit of the partner's rate limits. */
  accountId: string;
  accessToken: string;
  /**
   * A new access token after the partner refused this one (a 401): refreshed in one place (the
   * domain's usablePartnerToken), which marks the integration when the refresh is refused.
   */
  refresh(): Promise<string>;
  ids: PartnerIdStore;
}

export interface PartnerAdapter {
  /** Whether this is the local stand-in (its authorize page is ours). */
  readonly local: boolean;
  /** The name a new integration gets. */
  readonly label: string;
  /** The URL the user's browser opens. `codeChallenge` (S256) is sent where the partner documents PKCE. */
  authorizationUrl(input: { state: string; redirectUri: string; codeChallenge: string }): string;
  /** The code from the callback exchanged for tokens (with the PKCE verifier where the partner uses it). */
  exchangeCode(input: { code: string; redirectUri: string; codeVerifier: string }): Promise<PartnerTokens>;
  /** PartnerError `auth` when the grant is refused (revoked, uninstalled). */
  refresh(refreshToken: string): Promise<PartnerTokens>;
  /** Who the access token belongs to; PartnerError `auth` when refused. */
  account(accessToken: string): Promise<PartnerAccount>;
  /** Pushes up to PARTNER_BATCH records; one result per record, in order. */
  upsert(session: PartnerSession, records: PartnerRecord[]): Promise<PartnerResult[]>;
  close?(): Promise<void>;
}

export const PARTNER_BATCH = 100;

/** Every failure of the partner CRM (HTTP status and transport errors mapped like the other providers'). */
export class PartnerError extends ProviderError {
  constructor(code: ProviderErrorCode, message: string, details?: ProviderErrorDetails) {
    super('partner', code, message, details);
    this.name = 'PartnerError';
  }
}
