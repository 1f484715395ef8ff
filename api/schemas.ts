// Schemas shared across domains.
import { z } from 'zod';

export const ErrorBody = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional(), request_id: z.string().optional() }),
});
export const Uuid = z.uuid();
export const IdParams = z.object({ id: z.uuid() });
export const Timestamp = z.iso.datetime();
export const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);
