// The OpenAPI 3.1 document, generated from the operation declarations (the docs page is api/docs-page.ts).
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
