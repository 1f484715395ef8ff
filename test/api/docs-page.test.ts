import test, { type ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { api, call, closeApi, createUser } from '../helpers/api.js';
import { checkDocs } from '../../scripts/check-docs.js';
import { repoRoot } from '../../lib/config.js';
test.after.always(closeApi);

/**
 * A GET sent as written: fetch would normalise `..` away, and it adds `Cache-Control: no-cache` to
 * conditional requests, which rules out a 304.
 */
async function rawGet(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; bytes: Buffer; headers: Record<string, string | string[] | undefined> }> {
  const url = new URL((await api()).base);
  return new Promise((res, rej) => {
    request({ host: url.hostname, port: url.port, path, method: 'GET', headers }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => {
        const bytes = Buffer.concat(chunks);
        res({ status: r.statusCode ?? 0, body: bytes.toString(), bytes, headers: r.headers });
      });
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
  const etag = js.headers.get('etag') ?? ''; // fetch asks for gzip: the ETag of the gzipped bytes
  t.is(
    (await rawGet('/docs/assets/swagger-ui-bundle.js', { 'if-none-match': etag, 'accept-encoding': 'gzip' })).status,
    304,
  );

  const css = await call('GET', '/docs/assets/swagger-ui.css');
  t.regex(css.headers.get('content-type') ?? '', /^text\/css/);
  t.regex((await call('GET', '/docs/assets/docs.js')).text, /SwaggerUIBundle\(/);
  t.regex((await call('GET', '/docs/assets/favicon-32x32.png')).headers.get('content-type') ?? '', /^image\/png/);

  const unknown = await call('GET', '/docs/assets/nope.js');
  t.is(unknown.status, 404);
  t.is(unknown.body.error.code, 'not_found');
  // In the package but not allowlisted.
  t.is((await call('GET', '/docs/assets/index.html')).status, 404);
  for (const path of [
    '/docs/assets/../../package.json',
    '/docs/assets/..%2f..%2fpackage.json',
    '/docs/assets/%2e%2e/%2e%2e/package.json',
    '/docs/assets//etc/passwd',
  ]) {
    const r = await rawGet(path);
    t.is(r.status, 404, path);
    t.notRegex(r.body, /outreach-api|root:/, path);
  }
});

/**
 * A static body served for revalidation: gzip when accepted (same bytes once inflated), a strong
 * ETag per encoding, `Cache-Control: no-cache`, 304 with no body on a match, 200 otherwise.
 */
async function checkCached(t: ExecutionContext, path: string, type: RegExp): Promise<Buffer> {
  const plain = await rawGet(path);
  t.is(plain.status, 200);
  t.regex(String(plain.headers['content-type']), type);
  t.is(plain.headers['content-encoding'], undefined);
  t.is(plain.headers['cache-control'], 'no-cache');
  t.regex(String(plain.headers.vary), /accept-encoding/i);
  const etag = String(plain.headers.etag);
  t.regex(etag, /^"[A-Za-z0-9_-]{43}"$/); // strong: no W/ prefix; the sha256 of the bytes
  t.is(etag, `"${createHash('sha256').update(plain.bytes).digest('base64url')}"`);

  const gz = await rawGet(path, { 'accept-encoding': 'br;q=1, gzip;q=0.8' });
  t.is(gz.status, 200);
  t.is(gz.headers['content-encoding'], 'gzip');
  t.regex(String(gz.headers['content-type']), type);
  t.true(gz.bytes.length < plain.bytes.length);
  t.true(gunzipSync(gz.bytes).equals(plain.bytes));
  const gzEtag = String(gz.headers.etag);
  t.not(gzEtag, etag); // another encoding is another representation
  t.is(Number(gz.headers['content-length']), gz.bytes.length);

  for (const [req, tag] of [
    [{}, etag],
    [{ 'accept-encoding': 'gzip' }, gzEtag],
  ] as const) {
    const hit = await rawGet(path, { ...req, 'if-none-match': tag });
    t.is(hit.status, 304);
    t.is(hit.bytes.length, 0);
    t.is(hit.headers.etag, tag);
    t.is(hit.headers['cache-control'], 'no-cache');
    t.is((await rawGet(path, { ...req, 'if-none-match': `"stale", W/${tag}` })).status, 304); // a list, weak comparison
    const miss = await rawGet(path, { ...req, 'if-none-match': '"another-version"' });
    t.is(miss.status, 200);
    t.true(miss.bytes.length > 0);
  }
  // The gzip ETag does not validate the identity bytes.
  t.is((await rawGet(path, { 'if-none-match': gzEtag })).status, 200);
  return plain.bytes;
}

test('GET /openapi.json: gzip, a strong ETag, revalidation with 304, and the 304 in the document', async (t) => {
  const bytes = await checkCached(t, '/openapi.json', /^application\/json/);
  const doc = JSON.parse(bytes.toString()) as {
    paths: Record<
      string,
      Record<string, { responses: Record<string, { content?: unknown }>; parameters: { name: string; in: string }[] }>
    >;
  };
  t.deepEqual((await call('GET', '/openapi.json')).body, doc); // fetch inflates gzip transparently
  for (const path of ['/openapi.json', '/docs']) {
    const op = doc.paths[path].get;
    t.truthy(op.responses['304'], path);
    t.is(op.responses['304'].content, undefined, path);
    t.true(
      op.parameters.some((p) => p.in === 'header' && p.name === 'If-None-Match'),
      path,
    );
  }
  // HEAD: the headers of a GET, no body.
  const head = await fetch(`${(await api()).base}/openapi.json`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.truthy(head.headers.get('etag'));
  t.is(await head.text(), '');
});

test('GET /docs: gzip, a strong ETag and 304, with its own CSP on every answer', async (t) => {
  const html = await checkCached(t, '/docs', /^text\/html/);
  t.regex(html.toString(), /<div id="swagger-ui">/);
  const etag = String((await rawGet('/docs')).headers.etag);
  const hit = await rawGet('/docs', { 'if-none-match': etag });
  t.is(hit.status, 304);
  t.regex(String(hit.headers['content-security-policy']), /script-src 'self'/);
});

test('a headless Chromium renders every operation by tag, the bearer scheme, and working try-it-out', async (t) => {
  t.timeout(6 * 60_000); // the first run on a fresh machine installs chromium with apt-get
  const { base } = await api();
  const user = await createUser('Docs Reader');
  const screenshot = join(repoRoot, '.data', 'docs-screenshot.png');
  rmSync(screenshot, { force: true });

  const result = await checkDocs(base, { token: user.accessToken, screenshot, log: (m) => t.log(m) });

  const doc = (await call('GET', '/openapi.json')).body as {
    paths: Record<string, Record<string, { tags: string[] }>>;
    webhooks: Record<string, Record<string, { tags: string[] }>>;
  };
  const ops = [...Object.values(doc.paths), ...Object.values(doc.webhooks)].flatMap((m) => Object.values(m));
  t.deepEqual(result.problems, []);
  t.is(result.renderedOperations, ops.length);
  t.deepEqual(result.renderedTags, [...new Set(ops.flatMap((o) => o.tags))].sort());
  t.true(
    result.authSchemes.some((s) => /^bearer\b/.test(s)),
    result.authSchemes.join(),
  );
  t.deepEqual(result.tryItOut, { 'GET /healthz': '200', 'GET /api/users/me': '200' });
  t.deepEqual(result.cspViolations, []);
  t.deepEqual(result.consoleErrors, []);
  t.deepEqual(result.externalRequests, []);
  const png = readFileSync(screenshot);
  t.true(png.length > 10_000);
  t.is(png.subarray(1, 4).toString(), 'PNG');
  t.log(`${result.renderedOperations} operations in ${result.renderedTags.length} tags; screenshot ${screenshot}`);
});
