// The human docs page: Swagger UI (the pinned `swagger-ui-dist` package) rendering /openapi.json,
// served entirely from this process. Nothing is fetched from a CDN, so the page works offline and
// its Content-Security-Policy can stay 'self'-only.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Middleware } from 'koa';
import { CachedBody, sendCached } from './cached-body.js';

const ASSET_PREFIX = '/docs/assets/';

/**
 * Strict as Swagger UI allows: no inline or eval'd script (the init code is a served file), styles
 * only from our files (React sets inline styles through the CSSOM, which CSP does not block), and
 * data: images for the icons embedded in swagger-ui.css. Try-it-out calls this origin only.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// The init code. Authorization stays in memory (persistAuthorization off): a personal access token
// is long-lived, and localStorage would keep it on the machine after the tab is closed.
// validatorUrl 'none' stops the badge that would call validator.swagger.io.
const INIT_JS = `window.addEventListener('DOMContentLoaded', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    filter: true,
    persistAuthorization: false,
    validatorUrl: 'none',
  });
});
`;

// Small layout tweaks: the page is centred on wide screens.
const DOCS_CSS = `body { margin: 0; background: #fafafa; }
#swagger-ui { max-width: 1460px; margin: 0 auto; }
`;

interface Asset {
  body: CachedBody;
  /** Content hash, appended as ?v= by the page so that long caching never serves a stale file. */
  version: string;
}

function loadAssets(): Map<string, Asset> {
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const files: Record<string, { body: Buffer | string; type: string }> = {
    'swagger-ui.css': { body: readFileSync(join(dist, 'swagger-ui.css')), type: 'text/css; charset=utf-8' },
    'swagger-ui-bundle.js': {
      body: readFileSync(join(dist, 'swagger-ui-bundle.js')),
      type: 'text/javascript; charset=utf-8',
    },
    'favicon-32x32.png': { body: readFileSync(join(dist, 'favicon-32x32.png')), type: 'image/png' },
    'docs.js': { body: INIT_JS, type: 'text/javascript; charset=utf-8' },
    'docs.css': { body: DOCS_CSS, type: 'text/css; charset=utf-8' },
  };
  return new Map(
    Object.entries(files).map(([name, f]) => {
      const body = Buffer.from(f.body);
      return [
        name,
        { body: new CachedBody(body, f.type), version: createHash('sha256').update(body).digest('hex').slice(0, 12) },
      ];
    }),
  );
}

// Read once, on first use: the bundle is ~1.7 MB and never changes while the process runs.
let cache: Map<string, Asset> | undefined;
const assets = () => (cache ??= loadAssets());

/** Names served under /docs/assets/ (a fixed allowlist; everything else falls through to 404). */
export const docsAssetNames = (): string[] => [...assets().keys()];

const href = (name: string) => `${ASSET_PREFIX}${name}?v=${assets().get(name)!.version}`;

/**
 * Serves the allowlisted viewer files. A middleware rather than declared operations, so that the
 * OpenAPI document (and the viewer's own operation list) stays about the API. The name is looked up
 * in a map, never joined to a path, so `..` and friends simply miss.
 */
export const docsAssets = (): Middleware => async (ctx, next) => {
  if (!ctx.path.startsWith(ASSET_PREFIX) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
  const asset = assets().get(ctx.path.slice(ASSET_PREFIX.length));
  if (!asset) return next();
  // Versioned URLs (what the page links) are immutable; a bare URL must revalidate. Gzip takes the
  // 1.7 MB bundle to about a quarter.
  sendCached(ctx, asset.body, ctx.query.v === asset.version ? 'public, max-age=31536000, immutable' : 'no-cache');
};

let page: CachedBody | undefined;

/** The /docs HTML: the viewer's CSS and JS plus the init file; no inline script or style. */
export function docsPage(): CachedBody {
  return (page ??= new CachedBody(
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Outreach service API — docs</title>
<link rel="icon" type="image/png" href="${href('favicon-32x32.png')}">
<link rel="stylesheet" href="${href('swagger-ui.css')}">
<link rel="stylesheet" href="${href('docs.css')}">
</head>
<body>
<noscript>This page needs JavaScript. The machine-readable description is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<div id="swagger-ui"></div>
<script src="${href('swagger-ui-bundle.js')}"></script>
<script src="${href('docs.js')}"></script>
</body>
</html>
`,
    'text/html; charset=utf-8',
  ));
}
