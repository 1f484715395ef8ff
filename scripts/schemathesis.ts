// Schemathesis (PyPI) for the API contract test, installed once per machine into a virtualenv in the
// per-user cache outside the clone (like the Temporal CLI), so every clone and CI run reuses it.
import { ensureVenv } from './python-venv.js';

export const SCHEMATHESIS_VERSION = '4.32.5';

/** The command that runs the pinned schemathesis CLI (`[python, '-m', 'schemathesis.cli']`), installing it on first use. */
export async function ensureSchemathesis(log: (msg: string) => void = () => {}): Promise<string[]> {
  return [
    await ensureVenv(`schemathesis-${SCHEMATHESIS_VERSION}`, [`schemathesis==${SCHEMATHESIS_VERSION}`], log),
    '-m',
    'schemathesis.cli',
  ];
}
