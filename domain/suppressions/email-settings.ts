// The workspace's email settings (docs/email.md "Suppression"): the footer every email it sends ends
// with — its postal address, which anti-spam law asks commercial email to carry beside a way to
// unsubscribe. Owners and admins set it; everyone in the workspace reads it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireManager } from '../access.js';
import { assertWritable } from '../demo/demo.js';
import type { Actor } from '../identity.js';

/** Longest footer, characters. */
export const MAX_FOOTER_CHARS = 2000;

export interface EmailSettings {
  footer: string | null;
}

export async function getEmailSettings(em: EntityManager, actor: Actor): Promise<EmailSettings> {
  const [w] = await em.execute<{ footer: string | null }[]>(
    `select email_footer as footer from workspaces where id = ?`,
    [actor.workspaceId],
  );
  return { footer: w?.footer ?? null };
}

/** Sets (or, with null or a blank text, clears) the footer. */
export async function setEmailFooter(em: EntityManager, actor: Actor, footer: string | null): Promise<EmailSettings> {
  assertWritable(actor);
  requireManager(actor, 'the email footer');
  const value = footer?.trim() ? footer.trim() : null;
  await em.execute(`update workspaces set email_footer = ?, updated_at = now() where id = ?`, [
    value,
    actor.workspaceId,
  ]);
  return { footer: value };
}
