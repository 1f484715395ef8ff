import { z } from 'zod';
import type { IssuedTokens } from '../../domain/auth/auth.js';
import { UserView, toUserView } from '../users/schemas.js';
import { text } from '../schemas.js';

// At least 10 characters, with a letter and a non-letter, and not absurdly long (scrypt cost). The
// letter rule is Unicode's (a letter of any script), which the regex engines of client generators
// cannot all compile (`\p{L}`: Python's re, ECMAScript without the u flag): the document states it
// in prose, and its pattern is only the router's NUL rule.
export const PASSWORD_RULE =
  'at least one letter (of any script, Unicode category L) and one character that is not a letter';
export const Password = text({ min: 10, max: 200 })
  .refine((p) => /\p{L}/u.test(p) && /\P{L}/u.test(p), 'password must contain a letter and a digit or symbol')
  .meta({
    description: `10–200 characters: ${PASSWORD_RULE} (400 invalid_body otherwise)`,
    example: 'correct-horse-7',
  });

export const Email = z.email().max(320);

export const SignupBody = z
  .object({ email: Email, password: Password, name: text({ max: 200, trim: true }).optional() })
  .strict();
export const LoginBody = z.object({ email: text({ max: 320 }), password: text({ max: 200 }) }).strict();
export const RefreshBody = z.object({ refresh_token: text({ min: 1, max: 512 }) }).strict();

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
