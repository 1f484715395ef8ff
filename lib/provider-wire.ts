// Bounding what a provider sends before it can reach our rows: free text trimmed and clipped,
// identifiers dropped when malformed or over-long (a cut identifier would be a wrong one), blank
// values as unknown. Shared by the real adapters' wire schemas.
import { z } from 'zod';
import { normaliseProfileUrl } from './normalise.js';

/** Longest value kept per field (characters). */
export const FIELD_LIMITS = {
  email: 320,
  profileUrl: 2048,
  name: 200,
  text: 300,
  domain: 255,
  country: 100,
  phone: 40,
} as const;

/** Trimmed and cut to `max` characters (never inside a surrogate pair); null when blank. */
export function clip(value: string | null | undefined, max: number): string | null {
  const s = value?.trim();
  if (!s) return null;
  if (s.length <= max) return s;
  return s.slice(0, /[\uD800-\uDBFF]/.test(s[max - 1]) ? max - 1 : max).trimEnd();
}

/** A nullable wire string of free text: clipped, blank → null. */
export const wireText = (max: number) =>
  z
    .string()
    .nullish()
    .transform((v) => clip(v, max));

/** A nullable wire identifier: trimmed, and null when blank, longer than `max` or not `valid`. */
export const wireIdentifier = (max: number, valid: (s: string) => boolean) =>
  z
    .string()
    .nullish()
    .transform((v) => {
      const s = v?.trim();
      return s && s.length <= max && valid(s) ? s : null;
    });

export const isProfileUrl = (s: string) => normaliseProfileUrl(s) !== null;
