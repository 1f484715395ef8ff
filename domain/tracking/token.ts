// The signed token of an email's tracking URLs (docs/tracking.md "The URLs"). One token per sent
// email (scheduled action): the open pixel and every link redirect of that email carry it. Signed as
// the unsubscribe token is (lib/signed-ids.ts), under its own derived key: nothing to store, nothing
// looked up before the signature holds, and a token names one action only.
import { readSignedIds, signIds } from '../../lib/signed-ids.js';

/** What signs tracking URLs: the service's encryption key and public base URL (a Config is one). */
export interface TrackingSigning {
  encryptionKey: Buffer;
  publicBaseUrl: string;
}

const LABEL = 'tracking-v1';

/** `base64url(action id bytes).base64url(HMAC-SHA256 truncated to 128 bits)`, under the key of label `tracking-v1` (lib/signed-ids.ts). */
export const trackingToken = (secret: Buffer, actionId: string): string => signIds(secret, LABEL, [actionId]);

/** The action id a token names, or null when it is malformed or its signature does not hold. */
export const readTrackingToken = (secret: Buffer, token: string): string | null =>
  readSignedIds(secret, LABEL, token, 1)?.[0] ?? null;

/** The path prefix of every tracking URL (short: the URLs stand in every link of a tracked email). */
export const TRACKING_PREFIX = '/t';

/**
 * The tracking URLs of one sent email, under the public base URL: `open` the pixel
 * (`/t/<token>/open.gif`), `click(i)` the redirect to the body's link i (`/t/<token>/l/<i>`, i in
 * `linksOf` order). What the executor hands the mail connector as `SendEmailInput.tracking`.
 */
export function trackingUrls(
  signing: TrackingSigning,
  actionId: string,
): { open: string; click: (index: number) => string } {
  const base = `${signing.publicBaseUrl.replace(/\/+$/, '')}${TRACKING_PREFIX}/${trackingToken(signing.encryptionKey, actionId)}`;
  return { open: `${base}/open.gif`, click: (index: number) => `${base}/l/${index}` };
}
