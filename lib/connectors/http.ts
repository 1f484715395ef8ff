// A messaging-network connector over HTTP. Wire format (v1; docs/providers.md has the full description):
//
//   POST {base}/v1/profiles/resolve   Authorization: Bearer <CONNECTOR_API_KEY>
//   { full_name, first_name, last_name, company, company_domain, email, profile_url }   (null when unknown)
//   → 200 { profile: null | { profile_url, provider_id, full_name, first_name, last_name, headline,
//           title, company, country } }
//   → 404 also means no profile
//
// and the account half (connect, status, sends, invitations, chats: /v1/accounts/…), whose wire
// schemas and paths are in ./http-accounts.ts.
import { z } from 'zod';
import { clip, FIELD_LIMITS, isProfileUrl, wireText } from '../provider-wire.js';
import { JsonHttpClient, parseWire, splitName, type HttpProviderOptions } from '../provider-http.js';
import { HttpAccounts } from './http-accounts.js';
import { verifyInbound } from './inbound.js';
import {
  ConnectorError,
  type AccountConnector,
  type AttachmentStream,
  type AccountProfile,
  type Chat,
  type ChatMessage,
  type ConnectInput,
  type ConnectorAccountStatus,
  type ConnectStart,
  type InboundEvent,
  type InvitationResult,
  type NetworkConnector,
  type NetworkProfile,
  type Page,
  type PendingInvitation,
  type ProfileQuery,
  type SendEmailInput,
  type SendNetworkInput,
  type SendResult,
} from './types.js';

const profile = z.object({
  profile_url: z.string().trim().max(FIELD_LIMITS.profileUrl).refine(isProfileUrl, 'not an http(s) URL'),
  provider_id: z.union([z.string().trim().min(1).max(200), z.number().int()]).transform(String),
  full_name: z
    .string()
    .trim()
    .min(1)
    .transform((v) => clip(v, FIELD_LIMITS.name)!),
  first_name: wireText(FIELD_LIMITS.name),
  last_name: wireText(FIELD_LIMITS.name),
  headline: wireText(FIELD_LIMITS.text),
  title: wireText(FIELD_LIMITS.text),
  company: wireText(FIELD_LIMITS.text),
  country: wireText(FIELD_LIMITS.country),
});

const resolveResponse = z.object({ profile: profile.nullable() });

export class HttpConnector implements NetworkConnector, AccountConnector {
  readonly name = 'http';
  private readonly http: JsonHttpClient;
  private readonly accounts: HttpAccounts;
  private readonly webhookSecret: string | null;

  /** `webhookSecret` (CONNECTOR_WEBHOOK_SECRET) verifies the connector's pushes to /hooks/connector. */
  constructor(opts: HttpProviderOptions, inbound: { webhookSecret?: string | null } = {}) {
    this.http = new JsonHttpClient(
      this.name,
      opts,
      (code, message, details) => new ConnectorError(this.name, code, message, details),
    );
    this.accounts = new HttpAccounts(this.http);
    this.webhookSecret = inbound.webhookSecret ?? null;
  }

  connect(input: ConnectInput, signal?: AbortSignal): Promise<ConnectStart> {
    return this.accounts.connect(input, signal);
  }
  status(id: string, signal?: AbortSignal): Promise<ConnectorAccountStatus> {
    return this.accounts.status(id, signal);
  }
  statuses(ids: string[], signal?: AbortSignal): Promise<ConnectorAccountStatus[]> {
    return this.accounts.statuses(ids, signal);
  }
  disconnect(id: string, signal?: AbortSignal): Promise<void> {
    return this.accounts.disconnect(id, signal);
  }
  profile(id: string, signal?: AbortSignal): Promise<AccountProfile> {
    return this.accounts.profile(id, signal);
  }
  sendEmail(id: string, input: SendEmailInput, signal?: AbortSignal): Promise<SendResult> {
    return this.accounts.sendEmail(id, input, signal);
  }
  sendInvitation(id: string, input: SendNetworkInput, signal?: AbortSignal): Promise<InvitationResult> {
    return this.accounts.sendInvitation(id, input, signal);
  }
  sendMessage(id: string, input: SendNetworkInput, signal?: AbortSignal): Promise<SendResult> {
    return this.accounts.sendMessage(id, input, signal);
  }
  pendingInvitations(id: string, cursor: string | null, signal?: AbortSignal): Promise<Page<PendingInvitation>> {
    return this.accounts.pendingInvitations(id, cursor, signal);
  }
  withdrawInvitation(id: string, invitationId: string, signal?: AbortSignal): Promise<void> {
    return this.accounts.withdrawInvitation(id, invitationId, signal);
  }
  chats(id: string, cursor: string | null, signal?: AbortSignal): Promise<Page<Chat>> {
    return this.accounts.chats(id, cursor, signal);
  }
  messages(id: string, threadId: string, cursor: string | null, signal?: AbortSignal): Promise<Page<ChatMessage>> {
    return this.accounts.messages(id, threadId, cursor, signal);
  }
  attachment(
    id: string,
    messageId: string,
    attachmentId: string,
    opts: { maxBytes: number; signal?: AbortSignal },
  ): Promise<AttachmentStream> {
    return this.accounts.attachment(id, messageId, attachmentId, opts);
  }
  parseInbound(rawBody: Buffer, headers: Record<string, string | undefined>): InboundEvent {
    return verifyInbound(this.name, this.webhookSecret, rawBody, headers);
  }

  async findProfile(q: ProfileQuery, signal?: AbortSignal): Promise<NetworkProfile | null> {
    const body = {
      full_name: q.fullName,
      first_name: q.firstName,
      last_name: q.lastName,
      company: q.company,
      company_domain: q.companyDomain,
      email: q.email,
      profile_url: q.profileUrl,
    };
    const raw = await this.http.json('POST', '/v1/profiles/resolve', { body, signal, notFoundIsNull: true });
    if (raw === null) return null;
    const p = parseWire(this.http, resolveResponse, raw).profile;
    if (!p) return null;
    const split = splitName(p.full_name);
    return {
      profileUrl: p.profile_url,
      providerId: p.provider_id,
      fullName: p.full_name,
      firstName: p.first_name ?? split.firstName,
      lastName: p.last_name ?? split.lastName,
      headline: p.headline,
      title: p.title,
      company: p.company,
      country: p.country,
    };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
