// LinkedIn members through Unipile (/work/unipile-notes.md §4): `GET /users/{identifier}?account_id=`
// resolves a profile URL, public identifier or provider id to the member's profile (its
// `provider_id` is what invitations and chats take); `GET /users/me?account_id=` is the account's own.
// Every profile read is a profile view on LinkedIn (it counts against the account's daily limits):
// a recipient already given as a provider id is not looked up again.
import { z } from 'zod';
import { clip, FIELD_LIMITS, isProfileUrl } from '../../provider-wire.js';
import { parseWire, type JsonHttpClient } from '../../provider-http.js';
import type { AccountProfile, NetworkProfile } from '../types.js';
import { identifierOf, isProviderId, linkedinProfileUrl, query, refuse, seg, text, uid } from './wire.js';

/** The LinkedIn branch of `UserProfile` (fields we read; the rest is ignored). */
export const userProfile = z.object({
  provider_id: uid,
  public_identifier: text(200),
  first_name: text(500),
  last_name: text(500),
  headline: text(2000),
  location: text(500),
  public_profile_url: text(2048),
  profile_picture_url: text(4096),
  is_relationship: z.boolean().nullish(),
  network_distance: z.string().max(40).nullish(),
  invitation: z
    .object({ type: z.string().max(40).nullish(), status: z.string().max(40).nullish() })
    .nullish()
    .transform((v) => v ?? null),
  work_experience: z
    .array(
      z.object({
        position: text(500),
        company: text(500),
        current: z.boolean().nullish(),
      }),
    )
    .max(500)
    .nullish()
    .transform((v) => v ?? []),
});
export type UserProfile = z.infer<typeof userProfile>;

/** The LinkedIn branch of `AccountOwnerProfile`. */
const ownerProfile = z.object({
  provider_id: uid.nullish(),
  first_name: text(500),
  last_name: text(500),
  headline: text(2000),
  public_identifier: text(200),
  public_profile_url: text(2048),
  profile_picture_url: text(4096),
  email: text(320),
});

const fullName = (first: string | null, last: string | null) => clip([first, last].filter(Boolean).join(' '), 200);

/** The member's profile URL: Unipile's own when it is a URL, else LinkedIn's for the public identifier. */
export function profileUrlOf(p: {
  public_profile_url: string | null;
  public_identifier: string | null;
}): string | null {
  if (p.public_profile_url && isProfileUrl(p.public_profile_url) && /^https?:\/\//i.test(p.public_profile_url))
    return p.public_profile_url;
  return p.public_identifier ? linkedinProfileUrl(p.public_identifier) : null;
}

export class UnipilePeople {
  constructor(private readonly http: JsonHttpClient) {}

  /**
   * The member behind `identifier` (a slug or provider id) as `accountId` sees it; null when LinkedIn
   * has none (404). `experience` asks for the `experience` section too (`linkedin_sections`): the
   * current position's title and company.
   */
  async profile(
    accountId: string,
    identifier: string,
    signal?: AbortSignal,
    opts: { experience?: boolean } = {},
  ): Promise<UserProfile | null> {
    const raw = await this.http.json('GET', `users/${seg(identifier)}`, {
      query: query({ account_id: accountId, linkedin_sections: opts.experience ? 'experience' : null }),
      signal,
      notFoundIsNull: true,
    });
    return raw === null ? null : parseWire(this.http, userProfile, raw);
  }

  /** The recipient's profile; invalid_request (`invalid_recipient`) when it names nobody. */
  async resolve(accountId: string, recipient: string, signal?: AbortSignal): Promise<UserProfile> {
    const identifier = identifierOf(recipient);
    if (!identifier)
      throw refuse(
        this.http,
        'invalid_recipient',
        'the recipient is not a LinkedIn profile URL, public identifier or provider id',
      );
    const p = await this.profile(accountId, identifier, signal);
    if (!p) throw refuse(this.http, 'invalid_recipient', `no LinkedIn member ${identifier}`);
    return p;
  }

  /** The recipient's provider id: as given when it is one (no profile view), else resolved. */
  async providerIdOf(accountId: string, recipient: string, signal?: AbortSignal): Promise<string> {
    const identifier = identifierOf(recipient);
    if (identifier && isProviderId(identifier)) return identifier;
    return (await this.resolve(accountId, recipient, signal)).provider_id;
  }

  /** The account's own profile (`GET /users/me`). */
  async own(accountId: string, signal?: AbortSignal): Promise<AccountProfile> {
    const p = parseWire(
      this.http,
      ownerProfile,
      await this.http.json('GET', 'users/me', { query: query({ account_id: accountId }), signal }),
    );
    return {
      name: fullName(p.first_name, p.last_name),
      headline: clip(p.headline, 300),
      profileUrl: profileUrlOf(p),
      email: clip(p.email, 320),
      pictureUrl: p.profile_picture_url && /^https?:\/\//i.test(p.profile_picture_url) ? p.profile_picture_url : null,
    };
  }
}

/** A member's profile as the NetworkConnector answers it; `fallbackUrl` when Unipile names no URL. */
export function networkProfileOf(p: UserProfile, fallbackUrl: string | null): NetworkProfile | null {
  const profileUrl = profileUrlOf(p) ?? (fallbackUrl && isProfileUrl(fallbackUrl) ? fallbackUrl : null);
  if (!profileUrl) return null;
  const job = p.work_experience.find((w) => w.current) ?? p.work_experience[0] ?? null;
  // `location` is one line ("Paris, Île-de-France, France"): its last part is the country.
  const country = p.location?.split(',').at(-1) ?? null;
  return {
    profileUrl: clip(profileUrl, FIELD_LIMITS.profileUrl)!,
    providerId: p.provider_id,
    fullName: fullName(p.first_name, p.last_name) ?? p.public_identifier ?? p.provider_id,
    firstName: clip(p.first_name, FIELD_LIMITS.name),
    lastName: clip(p.last_name, FIELD_LIMITS.name),
    headline: clip(p.headline, FIELD_LIMITS.text),
    title: clip(job?.position, FIELD_LIMITS.text),
    company: clip(job?.company, FIELD_LIMITS.text),
    country: clip(country, FIELD_LIMITS.country),
  };
}
