import { z } from 'zod';
import type { IUser } from '../../db/entities/User.js';
import type { IApiToken } from '../../db/entities/ApiToken.js';
import type { ISession } from '../../db/entities/Session.js';
import { Timestamp, text } from '../schemas.js';

export const UserView = z.object({
  id: z.uuid(),
  email: z.string(),
  name: z.string().nullable(),
  timezone: z.string().nullable(),
  locale: z.string().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toUserView = (
  u: Pick<IUser, 'id' | 'email' | 'name' | 'timezone' | 'locale' | 'createdAt' | 'updatedAt'>,
): z.infer<typeof UserView> => ({
  id: u.id,
  email: u.email,
  name: u.name ?? null,
  timezone: u.timezone ?? null,
  locale: u.locale ?? null,
  created_at: u.createdAt.toISOString(),
  updated_at: u.updatedAt.toISOString(),
});

export const ApiTokenView = z.object({
  id: z.uuid(),
  name: z.string(),
  prefix: z.string(),
  last_used_at: Timestamp.nullable(),
  created_at: Timestamp,
});

export const toApiTokenView = (t: IApiToken): z.infer<typeof ApiTokenView> => ({
  id: t.id,
  name: t.name,
  prefix: t.prefix,
  last_used_at: t.lastUsedAt ? t.lastUsedAt.toISOString() : null,
  created_at: t.createdAt.toISOString(),
});

export const CreateApiTokenBody = z.object({ name: text({ min: 1, max: 100, trim: true }) }).strict();
export const CreatedApiToken = ApiTokenView.extend({ token: z.string() });

/** IANA zone names as this runtime's ICU knows them (canonical names, plus UTC), so the document can list them. */
const TIMEZONES = [...new Set([...Intl.supportedValuesOf('timeZone'), 'UTC'])] as [string, ...string[]];
/**
 * BCP 47 language[-Script][-REGION] (e.g. en, en-US, zh-Hant-TW), any case; stored canonicalised.
 * Every tag of this shape canonicalises (Intl.getCanonicalLocales) to at most 12 characters.
 */
const LOCALE = /^[A-Za-z]{2,3}(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|[0-9]{3}))?$/;

/** Only these fields are user-editable; anything else (id, email, role, ...) is rejected. */
export const UpdateProfileBody = z
  .object({
    name: text({ max: 200, trim: true }).nullable().optional(),
    timezone: z.enum(TIMEZONES, 'timezone must be an IANA time zone, e.g. Europe/Berlin').nullable().optional(),
    locale: z
      .string()
      .regex(LOCALE, 'locale must be a BCP 47 language tag, e.g. en-US')
      .transform((l) => Intl.getCanonicalLocales(l)[0])
      .nullable()
      .optional(),
  })
  .strict();

export const ChangePasswordBody = z.object({ current_password: text({ max: 200 }), new_password: z.string() }).strict();

export const SessionView = z.object({
  id: z.uuid(),
  created_at: Timestamp,
  last_used_at: Timestamp,
  expires_at: Timestamp,
  user_agent: z.string().nullable(),
  ip: z.string().nullable(),
  current: z.boolean(),
});

export const toSessionView = (s: ISession, currentId: string | undefined): z.infer<typeof SessionView> => ({
  id: s.id,
  created_at: s.createdAt.toISOString(),
  last_used_at: s.lastUsedAt.toISOString(),
  expires_at: s.expiresAt.toISOString(),
  user_agent: s.userAgent ?? null,
  ip: s.ip ?? null,
  current: s.id === currentId,
});
