import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { allOperations } from '../../api/operations.js';
import { repoRoot } from '../../lib/config.js';

const specFile = join(repoRoot, '..', 'shared', 'spec', 'operations.txt');
const spec = new Set(readFileSync(specFile, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean));

test('every declared /api operation is one of the 270 in the spec (coverage is reported)', (t) => {
  t.is(spec.size, 270);
  const declared = allOperations().filter((op) => op.path.startsWith('/api/')).map((op) => `${op.method} ${op.path}`);
  const unknown = declared.filter((d) => !spec.has(d));
  t.deepEqual(unknown, [], 'operations not in the spec');
  t.is(new Set(declared).size, declared.length, 'no operation declared twice');
  const missing = [...spec].filter((s) => !declared.includes(s));
  t.log(`operation coverage: ${declared.length} of ${spec.size}; first missing: ${missing.slice(0, 5).join(', ')}`);
});
