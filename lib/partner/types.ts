// The partner CRM behind one small interface (docs/integrations.md "Partner adapter"): the OAuth
// authorization-code flow with PKCE, the account the tokens belong to, and a batch upsert of our
// records by their external id (our uuid), which answers per record: pushed, unchanged, or held
// back because a person must decide (a field conflict, a possible duplicate).
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
  /** Our id: the partner upserts by it, so a repeated push never makes a second record. */
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
    };

export interface PartnerTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
}

export interface PartnerAccount {
  accountId: string;
  name: string | null;
}

export interface PartnerAdapter {
  /** Whether this is the local stand-in (its authorize page is ours). */
  readonly local: boolean;
  /** The URL the user's browser opens (S256 PKCE challenge included). */
  authorizationUrl(input: { state: string; redirectUri: string; codeChallenge: string }): string;
  /** The code from the callback exchanged for tokens with the PKCE verifier. */
  exchangeCode(input: { code: string; redirectUri: string; codeVerifier: string }): Promise<PartnerTokens>;
  refresh(refreshToken: string): Promise<PartnerTokens>;
  /** Who the access token belongs to; PartnerError `auth` when refused. */
  account(accessToken: string): Promise<PartnerAccount>;
  /** Upserts up to 100 records by external id; one result per record, in order. */
  upsert(accessToken: string, records: PartnerRecord[]): Promise<PartnerResult[]>;
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
