// Python tools the tests run (schemathesis, openapi-python-client), each installed once per machine
// into a virtualenv in the per-user cache outside the clone, so every clone and CI run reuses it.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const cacheDir = join(homedir(), '.cache', 'outreach-api');
const python = (venv: string) => join(venv, 'bin', 'python');

/** A Python ≥ 3.9 to create the virtualenv with: PYTHON, else python3.11, else python3. */
function basePython(tool: string): string {
  for (const candidate of [process.env.PYTHON, 'python3.11', 'python3'].filter(Boolean) as string[]) {
    try {
      const v = execFileSync(candidate, ['-c', 'import sys; print(sys.version_info >= (3, 9))'], {
        encoding: 'utf8',
      }).trim();
      if (v === 'True') return candidate;
    } catch {
      /* not there */
    }
  }
  throw new Error(`${tool} needs Python ≥ 3.9 (set PYTHON=/path/to/python3)`);
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err}`)),
    );
  });
}

/**
 * The python of the virtualenv `venv-<name>` holding `packages`, installed on first use.
 * Concurrency-safe without a lock: each caller builds in its own directory and renames it into place
 * atomically; a loser of the race drops its copy. Run tools as modules (`python -m …`): a renamed
 * virtualenv's console scripts keep their old shebang path.
 */
export async function ensureVenv(
  name: string,
  packages: string[],
  log: (msg: string) => void = () => {},
): Promise<string> {
  const venvDir = join(cacheDir, `venv-${name}`);
  if (existsSync(python(venvDir))) return python(venvDir);
  mkdirSync(cacheDir, { recursive: true });
  const partial = `${venvDir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  log(`installing ${packages.join(' ')} into ${venvDir}`);
  try {
    await run(basePython(name), ['-m', 'venv', partial]);
    await run(python(partial), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...packages]);
    renameSync(partial, venvDir);
  } catch (err) {
    // ENOTEMPTY/EEXIST: another process installed it meanwhile; use theirs.
    if (!existsSync(python(venvDir))) throw err;
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  return python(venvDir);
}
