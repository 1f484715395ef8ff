// The public unsubscribe link (docs/email.md "Unsubscribe"), beyond the spec. Every email carries
// `<PUBLIC_BASE_URL>/unsubscribe/<token>` (List-Unsubscribe, and `{{unsubscribe_url}}`), a token
// signed per recipient (domain/suppressions/unsubscribe.ts). GET only shows a confirmation page, so
// the link scanners of mail providers, which open every link, unsubscribe nobody; POST unsubscribes at
// once: the page's button, and RFC 8058 one-click (a mail client POSTs `List-Unsubscribe=One-Click`;
// the body is not read, any body does). Plain HTML pages, no script; a bad token is a 404 page.
import type { Context } from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { wakeEnrollments } from '../../domain/inbox/ingest.js';
import { readUnsubscribeToken, unsubscribeContact } from '../../domain/suppressions/unsubscribe.js';
import { esc, sendPage } from '../mcp/pages.js';
import { defineOperation } from '../operation.js';

const tag = 'email';

const TokenParams = z.object({
  token: z
    .string()
    .max(200)
    .meta({ description: 'The signed token of the link (a malformed or tampered one answers the 404 page)' }),
});
const PostQuery = z
  .object({
    from: z.enum(['page']).optional().meta({
      description:
        '`page`: the confirmation page’s button (recorded as source `link`); absent: a one-click POST (`one_click`)',
    }),
  })
  .strict();
const Html = z.string().meta({ description: 'An HTML page' });

/** `ab…@example.com`: enough for the person to recognise their address, not the whole of it to whoever holds the link. */
function maskEmail(email: string | null): string {
  if (!email) return 'your address';
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  return `${local.slice(0, Math.min(2, Math.max(1, local.length - 1)))}…${email.slice(at)}`;
}

function notFoundPage(ctx: Context): void {
  ctx.set('X-Error-Code', 'not_found');
  sendPage(
    ctx,
    404,
    'This unsubscribe link is not valid',
    '<p>The link may have been cut short by your email program. Reply to the email and ask to be removed instead: the sender will be told.</p>',
  );
}

const donePage = (ctx: Context, email: string | null) =>
  sendPage(
    ctx,
    200,
    'You are unsubscribed',
    `<p>${esc(maskEmail(email))} will receive no more email from this sender. You can close this page.</p>`,
  );

/** The contact a valid token names, in the token's workspace; null for a bad token or a contact that no longer exists. */
async function contactOf(em: EntityManager, key: Buffer, token: string) {
  const ids = readUnsubscribeToken(key, token);
  if (!ids) return null;
  const [c] = await em.execute<{ email: string | null; unsubscribed: boolean }[]>(
    `select coalesce(email_normalised, email) as email, unsubscribed_at is not null as unsubscribed from contacts where id = ? and workspace_id = ?`,
    [ids.contactId, ids.workspaceId],
  );
  return c ? { ...ids, ...c } : null;
}

export const unsubscribePageOp = defineOperation({
  method: 'GET',
  path: '/unsubscribe/{token}',
  operationId: 'getUnsubscribePage',
  ids: {
    path: {
      token: { value: 'a signed unsubscribe token (domain/suppressions/unsubscribe.ts), checked by its signature' },
    },
  },
  summary: 'The unsubscribe link’s confirmation page: changes nothing, its button POSTs back',
  description:
    'Beyond the spec. Public (the token is the authority). An HTML page; a malformed or tampered token, or a contact that no longer exists, answers a 404 HTML page.',
  tag,
  beyondSpec: true,
  auth: 'public',
  rateLimit: 'default',
  params: TokenParams,
  produces: 'text/html',
  responses: { 200: Html },
  alternatives: { 404: { 'text/html': Html } },
  errors: { 400: ['invalid_id'], 404: ['not_found'] },
  handler: async ({ ctx, em, params, services }) => {
    const c = await contactOf(em, services.config.encryptionKey, params.token);
    if (!c) return notFoundPage(ctx);
    if (c.unsubscribed) return donePage(ctx, c.email);
    sendPage(
      ctx,
      200,
      'Unsubscribe?',
      `<p>Stop all email from this sender to ${esc(maskEmail(c.email))}?</p>
<form method="post" action="/unsubscribe/${esc(params.token)}?from=page"><button class="primary" type="submit">Unsubscribe</button></form>`,
    );
  },
});

export const unsubscribeOp = defineOperation({
  method: 'POST',
  path: '/unsubscribe/{token}',
  operationId: 'unsubscribe',
  ids: {
    path: {
      token: { value: 'a signed unsubscribe token (domain/suppressions/unsubscribe.ts), checked by its signature' },
    },
  },
  summary: 'Unsubscribe at once (RFC 8058 one-click, and the confirmation page’s button): idempotent',
  description:
    'Beyond the spec. Public (the token is the authority). The contact is marked unsubscribed, its address put on the suppression list (reason `unsubscribe`), every running enrollment of it in the workspace stopped (`unsubscribed`) with its unsent actions canceled, and the workspace owner notified (`contact.unsubscribed`, the first time only). The body is not read: a one-click client sends `List-Unsubscribe=One-Click` (application/x-www-form-urlencoded), any body or none does. Answers an HTML page; a malformed or tampered token, or a contact that no longer exists, a 404 HTML page.',
  tag,
  beyondSpec: true,
  auth: 'public',
  rateLimit: 'default',
  params: TokenParams,
  query: PostQuery,
  produces: 'text/html',
  responses: { 200: Html },
  alternatives: { 404: { 'text/html': Html } },
  errors: { 400: ['invalid_id', 'invalid_query'], 404: ['not_found'] },
  handler: async ({ ctx, em, params, query, services }) => {
    const c = await contactOf(em, services.config.encryptionKey, params.token);
    if (!c) return notFoundPage(ctx);
    const r = await em.transactional((tx) =>
      unsubscribeContact(tx as EntityManager, c.workspaceId, c.contactId, query.from === 'page' ? 'link' : 'one_click'),
    );
    // After the commit: the enrollments were stopped in it; waking them is best effort (their gate reads the stop).
    await wakeEnrollments(
      services.jobs,
      r.stopped.map((s) => ({ ...s, signal: 'campaign_stopped' as const })),
    );
    donePage(ctx, r.email ?? c.email);
  },
});
