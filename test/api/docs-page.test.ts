import test from 'ava';
import { readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { api, call, closeApi, createUser } from '../helpers/api.js';
import { checkDocs } from '../../scripts/check-docs.js';
import { repoRoot } from '../../lib/config.js';
test.after.always(closeApi);

/**
 * A GET sent as written: fetch would normalise `..` away, and it adds `Cache-Control: no-cache` to
 * conditional requests, which rules out a 304.
 */
async function rawGet(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const url = new URL((await api()).base);
  return new Promise((res, rej) => {
    request({ host: url.hostname, port: url.port, path, method: 'GET', headers }, (r) => {
      let body = '';
      r.on('data', (c: Buffer) => (body += c.toString()));
      r.on('end', () => res({ status: r.statusCode ?? 0, body }));
    })
      .on('error', rej)
      .end();
  });
}

const assetLinks = (html: string) => [...html.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]);

test('GET /docs is the Swagger UI page: its own strict CSP, no inline script or style, assets served locally', async (t) => {
  const r = await call('GET', '/docs');
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /^text\/html/);
  const csp = r.headers.get('content-security-policy') ?? '';
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /script-src 'self'(;|$)/);
  t.regex(csp, /connect-src 'self'/);
  t.notRegex(csp, /unsafe-(eval|inline)|https?:/);
  t.notRegex(r.text, /<script(?![^>]*\ssrc=)|<style|\sstyle=/); // every script and style is a file
  t.notRegex(r.text, /https?:\/\//); // nothing from a CDN
  const links = assetLinks(r.text);
  t.true(links.length >= 4);
  for (const link of links) {
    const a = await call('GET', link);
    t.is(a.status, 200, link);
    t.regex(a.headers.get('cache-control') ?? '', /immutable/, link);
  }
});

test('docs assets: content types, revalidation, and nothing outside the allowlist', async (t) => {
  const js = await call('GET', '/docs/assets/swagger-ui-bundle.js');
  t.is(js.status, 200);
  t.regex(js.headers.get('content-type') ?? '', /^text\/javascript/);
  t.true(js.text.length > 100_000);
  t.is(js.headers.get('cache-control'), 'no-cache'); // an unversioned URL revalidates
  const etag = js.headers.get('etag') ?? '';
  t.is((await rawGet('/docs/assets/swagger-ui-bundle.js', { 'if-none-match': etag })).status, 304);

  const css = await call('GET', '/docs/assets/swagger-ui.css');
  t.regex(css.headers.get('content-type') ?? '', /^text\/css/);
  t.regex((await call('GET', '/docs/assets/docs.js')).text, /SwaggerUIBundle\(/);
  t.regex((await call('GET', '/docs/assets/favicon-32x32.png')).headers.get('content-type') ?? '', /^image\/png/);

  const unknown = await call('GET', '/docs/assets/nope.js');
  t.is(unknown.status, 404);
  t.is(unknown.body.error.code, 'not_found');
  // In the package but not allowlisted.
  t.is((await call('GET', '/docs/assets/index.html')).status, 404);
  for (const path of ['/docs/assets/../../package.json', '/docs/assets/..%2f..%2fpackage.json', '/docs/assets/%2e%2e/%2e%2e/package.json', '/docs/assets//etc/passwd']) {
    const r = await rawGet(path);
    t.is(r.status, 404, path);
    t.notRegex(r.body, /outreach-api|root:/, path);
  }
});

test('a headless Chromium renders every operation by tag, the bearer scheme, and working try-it-out', async (t) => {
  t.timeout(6 * 60_000); // the first run on a fresh machine installs chromium with apt-get
  const { base } = await api();
  const user = await createUser('Docs Reader');
  const screenshot = join(repoRoot, '.data', 'docs-screenshot.png');
  rmSync(screenshot, { force: true });

  const result = await checkDocs(base, { token: user.accessToken, screenshot, log: (m) => t.log(m) });

  const doc = (await call('GET', '/openapi.json')).body as { paths: Record<string, Record<string, { tags: string[] }>> };
  const ops = Object.values(doc.paths).flatMap((m) => Object.values(m));
  t.deepEqual(result.problems, []);
  t.is(result.renderedOperations, ops.length);
  t.deepEqual(result.renderedTags, [...new Set(ops.flatMap((o) => o.tags))].sort());
  t.true(result.authSchemes.some((s) => /^bearer\b/.test(s)), result.authSchemes.join());
  t.deepEqual(result.tryItOut, { 'GET /healthz': '200', 'GET /api/users/me': '200' });
  t.deepEqual(result.cspViolations, []);
  t.deepEqual(result.consoleErrors, []);
  t.deepEqual(result.externalRequests, []);
  const png = readFileSync(screenshot);
  t.true(png.length > 10_000);
  t.is(png.subarray(1, 4).toString(), 'PNG');
  t.log(`${result.renderedOperations} operations in ${result.renderedTags.length} tags; screenshot ${screenshot}`);
});
