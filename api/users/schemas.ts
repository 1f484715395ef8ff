import { z } from 'zod';
import type { IUser } from '../../db/entities/User.js';
import type { IApiToken } from '../../db/entities/ApiToken.js';
import { Timestamp } from '../schemas.js';

export const UserView = z.object({
  id: z.uuid(),
  email: z.string(),
  name: z.string().nullable(),
  timezone: z.string().nullable(),
  locale: z.string().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toUserView = (u: IUser): z.infer<typeof UserView> => ({
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

export const CreateApiTokenBody = z.object({ name: z.string().trim().min(1).max(100) }).strict();
export const CreatedApiToken = ApiTokenView.extend({ token: z.string() });
