// The contract test: schemathesis generates valid and invalid requests from GET /openapi.json and
// runs every check against the live API, so the document has to say exactly what the server does.
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSchemathesis } from '../../scripts/schemathesis.js';
import { api, closeApi, createPat, createUser } from '../helpers/api.js';
test.after.always(closeApi);

/** Examples per operation and phase: enough to cover every coverage-phase case, and ~2 min on 2 cores. */
const MAX_EXAMPLES = Number(process.env.SCHEMATHESIS_MAX_EXAMPLES ?? 30);
const SEED = Number(process.env.SCHEMATHESIS_SEED ?? 20260919);

interface Failure {
  operation: string;
  message: string;
}

/** Test cases of the JUnit report that carry a <failure> or an <error>, with their text. */
function junitFailures(xml: string): Failure[] {
  const out: Failure[] = [];
  const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&#10;/g, '\n').replace(/&amp;/g, '&');
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const body = m[2] ?? '';
    const name = /name="([^"]*)"/.exec(m[1])?.[1] ?? '?';
    for (const f of body.matchAll(/<(failure|error)\b([^>]*?)(?:\/>|>([\s\S]*?)<\/\1>)/g)) {
      const message = /message="([^"]*)"/.exec(f[2])?.[1] ?? '';
      out.push({ operation: unescape(name), message: unescape(`${f[1]}: ${message}\n${f[3] ?? ''}`).trim() });
    }
  }
  return out;
}

test('schemathesis: every check over the whole document, positive and negative', async (t) => {
  t.timeout(10 * 60_000);
  const st = await ensureSchemathesis((msg) => t.log(msg));
  const { base } = await api();
  const user = await createUser('Schemathesis');
  const token = await createPat(user, 'schemathesis');

  const dir = mkdtempSync(join(tmpdir(), 'schemathesis-'));
  const junit = join(dir, 'junit.xml');
  const args = [
    ...st.slice(1),
    'run',
    `${base}/openapi.json`,
    '--checks',
    'all',
    '--mode',
    'all',
    '--phases',
    'examples,coverage,fuzzing,stateful',
    '--max-examples',
    String(MAX_EXAMPLES),
    '--seed',
    String(SEED),
    '--header',
    `Authorization: Bearer ${token}`,
    '--workers',
    '2',
    '--report',
    'junit',
    '--report-junit-path',
    junit,
    '--no-color',
    '--output-truncate',
    'false',
  ];
  const started = Date.now();
  const { code, output } = await new Promise<{ code: number; output: string }>((resolve, reject) => {
    const child = spawn(st[0], args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SCHEMATHESIS_TELEMETRY: 'false' } });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', reject);
    child.once('exit', (c) => resolve({ code: c ?? 1, output }));
  });
  t.log(`schemathesis finished in ${Math.round((Date.now() - started) / 1000)} s (exit ${code})`);
  let failures: Failure[] = [];
  try {
    failures = junitFailures(readFileSync(junit, 'utf8'));
  } catch {
    /* no report: the output below says why */
  }
  if (process.env.SCHEMATHESIS_KEEP_OUTPUT) writeFileSync(process.env.SCHEMATHESIS_KEEP_OUTPUT, output);
  rmSync(dir, { recursive: true, force: true });
  for (const f of failures) t.log(`${f.operation}\n${f.message}\n`);
  if (failures.length || code !== 0) t.log(output.slice(-20_000));
  t.deepEqual(
    failures.map((f) => f.operation),
    [],
    'schemathesis failures',
  );
  t.is(code, 0, 'schemathesis exit code');
});
