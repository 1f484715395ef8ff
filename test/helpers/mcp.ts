// MCP test helpers: the SDK's own client with an OAuth provider kept in memory, and a scripted
// browser (fetch with cookies) that signs in (with the sign-in form's CSRF token) and answers the consent page.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { api, PASSWORD, type TestUser } from './api.js';

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

export class MemoryOAuthProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier?: string;
  authorizationUrl?: URL;
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test MCP client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(i: OAuthClientInformationMixed) {
    this.info = i;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(t: OAuthTokens) {
    this.saved = t;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }
}

const UNESCAPE: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescape = (s: string) => s.replace(/&(amp|lt|gt|quot|#39);/g, (m) => UNESCAPE[m]);

/** The hidden fields of the first form of a page. */
export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g))
    out[unescape(m[1])] = unescape(m[2]);
  return out;
}

/** A browser: keeps cookies, sends same-origin form posts, never follows redirects. */
export class Browser {
  cookies = new Map<string, string>();
  constructor(readonly base: string) {}

  async request(
    method: 'GET' | 'POST',
    pathOrUrl: string,
    form?: Record<string, string>,
    headers: Record<string, string> = {},
  ) {
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : this.base + pathOrUrl;
    const h: Record<string, string> = { ...headers };
    if (this.cookies.size) h.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) {
      h['content-type'] = 'application/x-www-form-urlencoded';
      h.origin ??= this.base;
      h['sec-fetch-site'] ??= 'same-origin';
    }
    const res = await fetch(url, {
      method,
      headers: h,
      body: form ? new URLSearchParams(form).toString() : undefined,
      redirect: 'manual',
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      this.cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return { status: res.status, html: await res.text(), location: res.headers.get('location'), headers: res.headers };
  }

  /** The sign-in form's hidden fields (`return_to`, `csrf_token`), as the sign-in page at `returnTo` gives them to this browser. */
  async loginForm(returnTo: string): Promise<Record<string, string>> {
    const page = await this.request('GET', returnTo);
    if (!page.html.includes('action="/oauth/mcp/login"'))
      throw new Error(`no sign-in page at ${returnTo}: ${page.status} ${page.html}`);
    return hiddenFields(page.html);
  }

  /** Signs in as a person would: opens the sign-in page (its CSRF token and cookie), then submits it. */
  async signIn(user: TestUser, returnTo: string, password = PASSWORD) {
    return this.request('POST', '/oauth/mcp/login', {
      ...(await this.loginForm(returnTo)),
      email: user.email,
      password,
    });
  }
}

/** Signs in (when needed) and allows the authorization request; returns the redirect's code. */
export async function approveConsent(browser: Browser, authorizationUrl: URL, user: TestUser): Promise<string> {
  let page = await browser.request('GET', authorizationUrl.toString());
  if (page.html.includes('action="/oauth/mcp/login"')) {
    const login = await browser.request('POST', '/oauth/mcp/login', {
      ...hiddenFields(page.html),
      email: user.email,
      password: PASSWORD,
    });
    if (login.status !== 303) throw new Error(`sign-in failed: ${login.status} ${login.html}`);
    page = await browser.request('GET', login.location!);
  }
  if (page.status !== 200 || !page.html.includes('action="/oauth/mcp/authorize"'))
    throw new Error(`no consent page: ${page.status} ${page.html}`);
  const done = await browser.request('POST', '/oauth/mcp/authorize', {
    ...hiddenFields(page.html),
    decision: 'approve',
  });
  if (done.status !== 303 || !done.location) throw new Error(`consent failed: ${done.status} ${done.html}`);
  const code = new URL(done.location).searchParams.get('code');
  if (!code) throw new Error(`no code in ${done.location}`);
  return code;
}

/**
 * The whole flow with the SDK's client: connect (401 → discovery → registration → authorization
 * URL), consent in the browser, finish with the code (PKCE), reconnect authorized.
 */
export async function connectMcp(
  user: TestUser,
): Promise<{ client: Client; provider: MemoryOAuthProvider; browser: Browser; base: string }> {
  const { base } = await api();
  const url = new URL(`${base}/mcp`);
  const provider = new MemoryOAuthProvider();
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const unauth = new Client({ name: 'test-client', version: '1.0.0' });
  await unauth.connect(first).then(
    () => {
      throw new Error('connected without authorization');
    },
    (err: unknown) => {
      if ((err as Error).name !== 'UnauthorizedError' && !String(err).includes('Unauthorized')) throw err;
    },
  );
  if (!provider.authorizationUrl) throw new Error('the client was not sent to the authorization endpoint');
  const browser = new Browser(base);
  const code = await approveConsent(browser, provider.authorizationUrl, user);
  await first.finishAuth(code);
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  return { client, provider, browser, base };
}
