// What the sandbox network simulates for a recipient: decided by a hash of the recipient alone, so the
// same person behaves the same way on every run and in every process (docs/providers.md).
import { createHash } from 'node:crypto';

/** Recipients in buckets below this accept an invitation … */
export const ACCEPT_BELOW = 40;
/** … and those below this reply to a message or email. */
export const REPLY_BELOW = 30;

const MINUTE = 60_000;

/** 0..99 from SHA-256 of the trimmed, lower-cased recipient (email, profile URL or provider id). */
export function recipientBucket(recipient: string): number {
  return createHash('sha256').update(recipient.trim().toLowerCase()).digest().readUInt32BE(0) % 100;
}

/** When (after the send) the recipient accepts / replies; null when they never do. */
export function sandboxFate(recipient: string): { acceptsAfterMs: number | null; repliesAfterMs: number | null } {
  const b = recipientBucket(recipient);
  return {
    acceptsAfterMs: b < ACCEPT_BELOW ? (30 + b) * MINUTE : null,
    repliesAfterMs: b < REPLY_BELOW ? (10 + b) * MINUTE : null,
  };
}

export const SANDBOX_REPLY_BODY = 'Thanks for reaching out. Happy to talk: when suits you? (sandbox reply)';
