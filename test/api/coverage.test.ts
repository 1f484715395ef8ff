import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { allOperations } from '../../api/operations.js';
import { buildOpenApi } from '../../api/openapi.js';
import { documentPath } from '../../api/path-params.js';
import { repoRoot } from '../../lib/config.js';

const specFile = join(repoRoot, '..', 'shared', 'spec', 'operations.txt');
const spec = new Set(
  readFileSync(specFile, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean),
);

test('every declared /api operation is one of the 270 in the spec, or declared beyond it (coverage is reported)', (t) => {
  t.is(spec.size, 270);
  const ops = allOperations().filter((op) => op.path.startsWith('/api/'));
  const key = (op: { method: string; path: string }) => `${op.method} ${op.path}`;
  const declared = ops.map(key);
  t.is(new Set(declared).size, declared.length, 'no operation declared twice');
  // Operations of ours beyond the spec say so (`beyondSpec`); every other one must be in it.
  const beyond = ops.filter((op) => op.beyondSpec).map(key);
  const unknown = ops
    .filter((op) => !op.beyondSpec)
    .map(key)
    .filter((d) => !spec.has(d));
  t.deepEqual(unknown, [], 'operations not in the spec');
  t.deepEqual(
    beyond.filter((d) => spec.has(d)),
    [],
    'operations marked beyond the spec that the spec lists',
  );
  const inSpec = declared.filter((d) => spec.has(d));
  const missing = [...spec].filter((s) => !declared.includes(s));
  t.log(`operation coverage: ${inSpec.length} of ${spec.size}; first missing: ${missing.slice(0, 5).join(', ')}`);
  t.log(`beyond the spec (${beyond.length}): ${beyond.join(', ')}`);
});

test('operations beyond the spec are marked x-beyond-spec in the OpenAPI document, and only they', (t) => {
  const doc = buildOpenApi(allOperations()) as { paths: Record<string, Record<string, { 'x-beyond-spec'?: boolean }>> };
  for (const op of allOperations()) {
    const o = doc.paths[documentPath(op.path)][op.method.toLowerCase()];
    t.is(o['x-beyond-spec'], op.beyondSpec ? true : undefined, `${op.method} ${op.path}`);
  }
  t.true(allOperations().some((op) => op.beyondSpec && op.path === '/api/campaigns/{campaignId}/enrollments'));
  t.true(allOperations().some((op) => op.beyondSpec && op.path === '/api/enrollments/{id}'));
});
