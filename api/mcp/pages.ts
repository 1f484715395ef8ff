// The browser pages of the MCP authorization flow (docs/mcp.md): sign-in, consent, approval. Plain
// server-rendered HTML: every value escaped, no script, styles allowed by a per-response nonce only,
// never framed (clickjacking), never cached.
import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const esc = (s: unknown): string => String(s ?? '').replace(/[&<>"']/g, (c) => ESC[c]);

const hidden = (fields: Record<string, string | undefined>) =>
  Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('');

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.3rem}.box{border:1px solid #ccc;border-radius:8px;padding:1rem 1.2rem;margin:1rem 0}
dt{font-weight:600}dd{margin:0 0 .6rem}pre{background:#f5f5f5;padding:.6rem;overflow:auto;white-space:pre-wrap;word-break:break-all}
label{display:block;margin:.6rem 0 .2rem}input[type=email],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}
button{padding:.5rem 1.1rem;margin:.8rem .6rem 0 0;border-radius:6px;border:1px solid #888;background:#fff;cursor:pointer}
button.primary{background:#1d4ed8;color:#fff;border-color:#1d4ed8}.error{color:#b91c1c}.muted{color:#666;font-size:.9em}`;

/** Writes an HTML page with its own CSP (nonce-bound styles, no scripts, no framing). */
export function sendPage(ctx: Context, status: number, title: string, body: string): void {
  const nonce = randomBytes(16).toString('base64');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'nonce-${nonce}'; frame-ancestors 'none'; base-uri 'none'`,
  );
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title><style nonce="${nonce}">${STYLE}</style></head><body><h1>${esc(title)}</h1>${body}</body></html>`;
}

export function loginPage(ctx: Context, returnTo: string, csrf: string, error?: string): void {
  sendPage(
    ctx,
    error ? 401 : 200,
    'Sign in to continue',
    `<p>An application asks to use your workspace through MCP. Sign in to review the request.</p>
${error ? `<p class="error">${esc(error)}</p>` : ''}
<form method="post" action="/oauth/mcp/login">${hidden({ return_to: returnTo, csrf_token: csrf })}
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button class="primary" type="submit">Sign in</button></form>`,
  );
}

export interface ConsentInfo {
  clientName: string;
  clientUri: string | null;
  redirectUri: string;
  userEmail: string;
  workspaceName: string;
  csrf: string;
  params: Record<string, string | undefined>;
}

export function consentPage(ctx: Context, c: ConsentInfo): void {
  const redirect = new URL(c.redirectUri);
  sendPage(
    ctx,
    200,
    `Allow ${c.clientName} to use your workspace?`,
    `<div class="box"><dl>
<dt>Application</dt><dd>${esc(c.clientName)}${c.clientUri ? ` <span class="muted">(${esc(c.clientUri)})</span>` : ''}<br><span class="muted">It registered itself; this name is not verified.</span></dd>
<dt>Returns to</dt><dd>${esc(`${redirect.protocol}//${redirect.host}`)}</dd>
<dt>Signed in as</dt><dd>${esc(c.userEmail)}</dd>
<dt>Workspace</dt><dd>${esc(c.workspaceName)}</dd>
<dt>Access</dt><dd>Read your workspace with the Operator's tools. Anything that changes, sends, spends or deletes asks for your approval in the browser each time.</dd>
</dl></div>
<form method="post" action="/oauth/mcp/authorize">${hidden({ ...c.params, csrf_token: c.csrf })}
<button class="primary" type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></form>`,
  );
}

export interface ApprovalInfo {
  id: string;
  status: string;
  toolName: string;
  description: string;
  risk: string;
  clientName: string;
  args: unknown;
  expiresAt: string;
  csrf: string;
  result: unknown;
}

export function approvalPage(ctx: Context, a: ApprovalInfo, notice?: string): void {
  const pending = a.status === 'pending';
  sendPage(
    ctx,
    200,
    pending ? `Approve ${a.toolName}?` : `Request ${a.status}`,
    `${notice ? `<p>${esc(notice)}</p>` : ''}<div class="box"><dl>
<dt>Tool</dt><dd>${esc(a.toolName)} <span class="muted">(risk: ${esc(a.risk)})</span><br>${esc(a.description)}</dd>
<dt>Asked by</dt><dd>${esc(a.clientName)}</dd>
<dt>Arguments (exactly what runs)</dt><dd><pre>${esc(JSON.stringify(a.args, null, 2))}</pre></dd>
<dt>Status</dt><dd>${esc(a.status)}${pending ? ` — expires ${esc(a.expiresAt)}` : ''}</dd>
${a.result ? `<dt>Result</dt><dd><pre>${esc(JSON.stringify(a.result, null, 2))}</pre></dd>` : ''}
</dl></div>
${pending ? `<form method="post" action="/oauth/mcp/approvals/${esc(a.id)}">${hidden({ csrf_token: a.csrf })}<button class="primary" type="submit">Approve once</button></form><p class="muted">Not yours to run? Leave this page: the request expires on its own.</p>` : ''}`,
  );
}

/** An error page; `code` (e.g. `csrf_failed`) is shown and sent as `X-Error-Code` for clients and tests. */
export function errorPage(ctx: Context, status: number, message: string, code?: string): void {
  if (code) ctx.set('X-Error-Code', code);
  sendPage(
    ctx,
    status,
    'This request cannot continue',
    `<p class="error">${esc(message)}</p>${code ? `<p class="muted">Error code: <code>${esc(code)}</code></p>` : ''}`,
  );
}
