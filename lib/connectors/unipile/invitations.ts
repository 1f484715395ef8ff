// LinkedIn invitations through Unipile (/work/unipile-notes.md §5): the recipient is resolved to its
// provider id first (`GET /users/{identifier}`), then `POST /users/invite` (JSON: provider_id,
// account_id, message ≤ 300 characters); pending ones are `GET /users/invite/sent`, withdrawn with
// `DELETE /users/invite/sent/{id}?account_id=`.
//
// Never twice: Unipile takes no idempotency key, but LinkedIn keeps at most one pending invitation
// per member and account, and the profile read before sending says whether one is pending
// (`invitation: { type: SENT, status: PENDING }`). When it is (a retry after a lost answer, or an
// earlier invitation to the same member), the pending invitation is looked up in the sent list and
// answered instead of sending; the same when Unipile refuses with `already_invited_recently` or
// `action_already_performed`. So a repeated send answers the pending invitation, whichever action
// sent it.
import { z } from 'zod';
import { parseWire, type JsonHttpClient } from '../../provider-http.js';
import {
  ConnectorError,
  type InvitationResult,
  type Page,
  type PendingInvitation,
  type SendNetworkInput,
} from '../types.js';
import type { UnipilePeople, UserProfile } from './people.js';
import { findInPages, linkedinProfileUrl, listOf, query, refuse, seg, text, uid, when } from './wire.js';

/** LinkedIn's (and the API schema's) limit on an invitation's note, in characters. */
export const INVITATION_NOTE_MAX = 300;
/** Pages of the sent list read when looking for a member's pending invitation (100 each). */
const PENDING_SCAN_PAGES = 10;

const invitationSent = z.object({ invitation_id: uid, usage: z.number().nullish() });
const sentItem = z.object({
  id: uid,
  invited_user: text(500),
  invited_user_id: text(200),
  invited_user_public_id: text(200),
  date: text(100),
  parsed_datetime: text(100),
});
const sentList = listOf(sentItem);
type SentItem = z.infer<typeof sentItem>;

/** When it was sent: `parsed_datetime`, else `date` when it is a date; else unknown (now: never withdrawn early). */
function sentAtOf(i: SentItem, now: Date): Date {
  for (const v of [i.parsed_datetime, i.date]) {
    const r = v ? when.safeParse(v) : null;
    if (r?.success) return r.data;
  }
  return now;
}

export class UnipileInvitations {
  constructor(
    private readonly http: JsonHttpClient,
    private readonly people: UnipilePeople,
    private readonly now: () => Date,
  ) {}

  async send(accountId: string, input: SendNetworkInput, signal?: AbortSignal): Promise<InvitationResult> {
    const note = input.body.trim();
    if ([...note].length > INVITATION_NOTE_MAX)
      throw refuse(this.http, 'note_too_long', `an invitation note is at most ${INVITATION_NOTE_MAX} characters`);
    const member = await this.people.resolve(accountId, input.recipient, signal);
    if (member.network_distance === 'FIRST_DEGREE' || member.is_relationship === true)
      throw refuse(this.http, 'already_connected', 'the member is already a relation of the account');
    if (member.invitation?.type === 'SENT' && member.invitation.status === 'PENDING') {
      const pending = await this.pendingTo(accountId, member, signal);
      if (pending) return { ...pending, recipientId: member.provider_id };
      throw refuse(this.http, 'already_invited', 'an invitation to this member is pending, but not in the sent list');
    }
    let raw: unknown;
    try {
      raw = await this.http.json('POST', 'users/invite', {
        body: { provider_id: member.provider_id, account_id: accountId, ...(note ? { message: note } : {}) },
        signal,
      });
    } catch (err) {
      const reason = err instanceof ConnectorError ? err.details.reason : undefined;
      if (reason === 'already_invited_recently' || reason === 'action_already_performed') {
        const pending = await this.pendingTo(accountId, member, signal);
        if (pending) return { ...pending, recipientId: member.provider_id };
      }
      throw err;
    }
    const r = parseWire(this.http, invitationSent, raw);
    return { invitationId: r.invitation_id, sentAt: this.now(), recipientId: member.provider_id };
  }

  /** The account's pending invitation to `member`, from the sent list (first pages only). */
  private pendingTo(accountId: string, member: UserProfile, signal?: AbortSignal): Promise<InvitationResult | null> {
    const now = this.now();
    return findInPages(
      (cursor) => this.sentPage(accountId, cursor, signal),
      (i) =>
        i.invited_user_id === member.provider_id ||
        (member.public_identifier !== null && i.invited_user_public_id === member.public_identifier)
          ? { invitationId: i.id, sentAt: sentAtOf(i, now) }
          : null,
      PENDING_SCAN_PAGES,
    );
  }

  private async sentPage(accountId: string, cursor: string | null, signal?: AbortSignal) {
    return parseWire(
      this.http,
      sentList,
      await this.http.json('GET', 'users/invite/sent', {
        query: query({ account_id: accountId, limit: 100, cursor }),
        signal,
      }),
    );
  }

  async pending(accountId: string, cursor: string | null, signal?: AbortSignal): Promise<Page<PendingInvitation>> {
    const now = this.now();
    const r = await this.sentPage(accountId, cursor, signal);
    return {
      items: r.items.map((i) => ({
        invitationId: i.id,
        recipient: i.invited_user_public_id
          ? linkedinProfileUrl(i.invited_user_public_id)
          : (i.invited_user_id ?? i.invited_user ?? ''),
        sentAt: sentAtOf(i, now),
      })),
      cursor: r.cursor,
    };
  }

  /** Withdraws it (idempotent: a 404 is already gone). */
  async withdraw(accountId: string, invitationId: string, signal?: AbortSignal): Promise<void> {
    await this.http.json('DELETE', `users/invite/sent/${seg(invitationId)}`, {
      query: query({ account_id: accountId }),
      signal,
      notFoundIsNull: true,
    });
  }
}
