// OAuth helpers shared by every provider we connect through the authorization-code flow with PKCE
// (booking providers, the partner CRM): the S256 challenge, and the codes our local stand-in
// authorize pages hand back (they carry the redirect URI and challenge, checked at the exchange).
import { createHash } from 'node:crypto';

/** The S256 PKCE challenge of a verifier (RFC 7636). */
export const pkceChallenge = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

const hex = (s: string, n = 16) => createHash('sha256').update(s).digest('hex').slice(0, n);

export interface LocalCode {
  /** The provider it was issued for. */
  p: string;
  /** The redirect URI of the authorization request. */
  r: string;
  /** The PKCE challenge, if any. */
  c: string | null;
  /** The subject (a hash of the login hint). */
  s: string;
}

/** The code a local authorize route hands back: the provider, redirect URI, PKCE challenge and subject. */
export function localAuthorizationCode(input: {
  provider: string;
  redirectUri: string;
  codeChallenge: string | null;
  loginHint?: string | null;
}): string {
  const code: LocalCode = {
    p: input.provider,
    r: input.redirectUri,
    c: input.codeChallenge,
    s: hex(`subject:${input.loginHint || 'local'}`),
  };
  return `lc_${Buffer.from(JSON.stringify(code)).toString('base64url')}`;
}

export function readLocalCode(code: string): LocalCode | null {
  if (!code.startsWith('lc_') || code.length > 4000) return null;
  try {
    const c = JSON.parse(Buffer.from(code.slice(3), 'base64url').toString('utf8')) as LocalCode;
    return typeof c.p === 'string' && typeof c.r === 'string' && typeof c.s === 'string' ? c : null;
  } catch {
    return null;
  }
}

/**
 * Why a local code does not grant tokens for this exchange (null when it does): issued for another
 * provider or redirect URI, or a verifier that does not match its challenge.
 */
export function localCodeRefusal(
  code: LocalCode | null,
  provider: string,
  redirectUri: string,
  verifier: string | null,
): string | null {
  if (!code || code.p !== provider) return 'unknown code';
  if (code.r !== redirectUri) return 'redirect_uri differs from the authorization request';
  if (code.c && (!verifier || pkceChallenge(verifier) !== code.c))
    return 'the PKCE verifier does not match the challenge';
  return null;
}
