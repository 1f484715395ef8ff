// docs/quickstart.md, run as written: its ```sh blocks, in order, concatenated into one bash script
// run with `bash -euo pipefail` against this run's API (in process, over real HTTP), the run's worker
// (scripts/test.ts) and the local mail server. Only the variables the doc declares at the top with a
// default (`NAME=${NAME:-…}`) are given from here; no command is rewritten. The doc's own `check`
// lines make it fail loudly; this test asserts the script ended 0 with every check reported `ok`.
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { repoRoot } from '../../lib/config.js';
import { api, closeApi } from '../helpers/api.js';
import { mailServer } from '../helpers/mail-server.js';
test.after.always(closeApi);

const doc = readFileSync(join(repoRoot, 'docs/quickstart.md'), 'utf8');
const blocks = [...doc.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
const SCRIPT_TIMEOUT_MS = 240_000;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', res));
  const { port } = s.address() as { port: number };
  await new Promise((res) => s.close(res));
  return port;
}

test('docs/quickstart.md runs as written: sign-up to the first email sent and its webhook received', async (t) => {
  t.timeout(SCRIPT_TIMEOUT_MS + 30_000);
  t.true(blocks.length >= 8, `the quick start's sh blocks (found ${blocks.length})`);

  const m = mailServer();
  const settings: Record<string, string> = {
    BASE: (await api()).base,
    MAIL_HOST: m.host,
    SMTP_PORT: String(m.smtpPort),
    IMAP_PORT: String(m.imapPort),
    MAIL_API: m.apiUrl,
    RECEIVER_PORT: String(await freePort()),
  };
  // What the test may set is what the doc declares at the top, each with its default.
  for (const name of Object.keys(settings))
    t.regex(blocks[0], new RegExp(`^${name}=\\$\\{${name}:-[^}]+\\}`, 'm'), `the first block declares ${name}`);

  const dir = mkdtempSync(join(tmpdir(), 'quickstart-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'quickstart.sh');
  writeFileSync(file, blocks.join('\n'));

  const started = Date.now();
  const child = spawn('bash', ['-euo', 'pipefail', file], {
    // In the repository, as the doc says: its receiver (step 8) loads `standardwebhooks` from node_modules.
    cwd: repoRoot,
    // The doc's JSON helper runs `node`: the one running the tests, first on PATH.
    env: { ...process.env, ...settings, PATH: [dirname(process.execPath), process.env.PATH].join(delimiter) },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so whatever it left running (the webhook receiver, on a failure) is stopped with it.
    detached: true,
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  const timer = setTimeout(killGroup, SCRIPT_TIMEOUT_MS);
  const code = await new Promise<number | null>((res) => child.once('exit', (c) => res(c)));
  clearTimeout(timer);
  killGroup();
  t.log(`quick start ran in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const report = `exit ${code}\n--- stdout\n${out}\n--- stderr\n${err}`;
  t.is(code, 0, report);
  t.notRegex(out + err, /^FAILED: /m, report);
  const checks = blocks.join('\n').match(/^\s*check /gm)?.length ?? 0;
  t.true(checks >= 6, 'the doc checks what it promises');
  t.is(out.match(/^ok: /gm)?.length ?? 0, checks, `every check of the doc passed\n${report}`);
  t.regex(out, /^quick start: every step passed$/m, report);
});
