import { z } from 'zod';
import type { IssuedTokens } from '../../domain/auth.js';
import { UserView, toUserView } from '../users/schemas.js';

// At least 10 characters, with a letter and a non-letter, and not absurdly long (scrypt cost).
export const Password = z
  .string()
  .min(10, 'password must be at least 10 characters')
  .max(200)
  .refine((p) => /\p{L}/u.test(p) && /[^\p{L}]/u.test(p), 'password must contain a letter and a digit or symbol');

export const Email = z.email().max(320);

export const SignupBody = z.object({ email: Email, password: Password, name: z.string().trim().max(200).optional() }).strict();
export const LoginBody = z.object({ email: z.string().max(320), password: z.string().max(200) }).strict();
export const RefreshBody = z.object({ refresh_token: z.string().min(1).max(512) }).strict();

export const AuthResult = z.object({
  user: UserView,
  access_token: z.string(),
  refresh_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
});

export const toAuthResult = (t: IssuedTokens): z.infer<typeof AuthResult> => ({
  user: toUserView(t.user),
  access_token: t.accessToken,
  refresh_token: t.refreshToken,
  token_type: 'Bearer',
  expires_in: t.expiresIn,
});
