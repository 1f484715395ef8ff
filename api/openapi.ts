// OpenAPI 3.1 document and an HTML docs page, both generated from the operation declarations.
import { z } from 'zod';
import type { Operation } from './operation.js';
import { ErrorBody } from './schemas.js';

type Json = Record<string, unknown>;

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output'): Json => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
  return rest;
};

function parameters(schema: z.ZodType | undefined, where: 'path' | 'query'): Json[] {
  if (!schema) return [];
  const s = jsonSchema(schema, 'input') as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(s.properties ?? {}).map(([name, prop]) => ({
    name,
    in: where,
    required: where === 'path' || (s.required ?? []).includes(name),
    schema: prop,
  }));
}

function operationObject(op: Operation): Json {
  const responses: Json = {};
  for (const [status, schema] of Object.entries(op.responses)) {
    responses[status] = schema
      ? { description: 'Success', content: { [op.produces ?? 'application/json']: { schema: jsonSchema(schema, 'output') } } }
      : { description: 'Success, no content' };
  }
  // The router's generic Demo rule (api/middleware/demo.ts) adds 403 demo_read_only to acting-as writes.
  const errors: Record<string, string[]> = { ...op.errors };
  if (op.auth === 'user' && op.actingAs && op.method !== 'GET' && op.demo !== 'simulate' && !(errors[403] ?? []).includes('demo_read_only')) {
    errors[403] = [...(errors[403] ?? []), 'demo_read_only'];
  }
  for (const [status, codes] of Object.entries(errors)) {
    responses[status] = { description: `Error codes: ${codes.join(', ')}`, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  }
  return {
    operationId: op.operationId,
    summary: op.summary,
    tags: [op.tag],
    security: op.auth === 'public' ? [] : [{ bearer: [] }],
    parameters: [
      ...parameters(op.params, 'path'),
      ...parameters(op.query, 'query'),
      ...(op.actingAs ? [{ name: 'X-Acting-As', in: 'header', required: false, schema: { type: 'string', format: 'uuid' }, description: 'Act in the workspace of this team owner' }] : []),
    ],
    ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(op.body, 'input') } } } } : {}),
    responses,
    'x-rate-limit-group': op.rateLimit,
  };
}

export function buildOpenApi(operations: Operation[]): Json {
  const paths: Record<string, Json> = {};
  for (const op of operations) (paths[op.path] ??= {})[op.method.toLowerCase()] = operationObject(op);
  return {
    openapi: '3.1.0',
    info: { title: 'Outreach service API', version: '2026-09-19', description: 'Lead discovery and outreach workspace. Errors are {"error":{"code","message"}}.' },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Personal access token (pat_…) or session JWT' } },
      schemas: { Error: jsonSchema(ErrorBody, 'output') },
    },
    paths,
  };
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderDocs(doc: Json): string {
  const byTag = new Map<string, string[]>();
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = (op.tags as string[])[0];
      const detail = esc(JSON.stringify({ parameters: op.parameters, requestBody: op.requestBody, responses: op.responses }, null, 2));
      const lock = (op.security as unknown[]).length ? '' : ' <em>public</em>';
      (byTag.get(tag) ?? byTag.set(tag, []).get(tag)!).push(
        `<details><summary><b>${method.toUpperCase()}</b> <code>${esc(path)}</code> ${esc(String(op.summary))}${lock}</summary><pre>${detail}</pre></details>`,
      );
    }
  }
  const sections = [...byTag].map(([tag, items]) => `<h2>${esc(tag)}</h2>${items.join('\n')}`).join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>API docs</title>
<style>body{font:14px system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em}summary{cursor:pointer;padding:4px 0}pre{background:#f5f5f5;padding:8px;overflow:auto}code{color:#036}</style>
</head><body><h1>${esc(String((doc.info as Json).title))}</h1><p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). Authenticate with <code>Authorization: Bearer &lt;token&gt;</code>.</p>${sections}</body></html>`;
}
