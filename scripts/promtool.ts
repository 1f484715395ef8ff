// promtool (Prometheus' rule and exposition checker) for test/lib/metrics-rules.test.ts: PROMTOOL,
// PATH, or the per-user cache outside the clone (~/.cache/outreach-api, like the Temporal CLI), where
// it is taken once per machine from Debian's `prometheus` package (apt-get download + dpkg-deb: no
// install, no root needed). Null when none can be had (not Debian, no network): the caller falls back.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir, isExecutable, onPath } from './stack/processes.js';

export const promtoolCached = join(cacheDir, 'prometheus', 'usr', 'bin', 'promtool');

export function promtoolBinary(log: (msg: string) => void = () => {}): string | null {
  const fromEnv = process.env.PROMTOOL;
  if (fromEnv) return isExecutable(fromEnv) ? fromEnv : null;
  const found = onPath('promtool');
  if (found) return found;
  if (isExecutable(promtoolCached)) return promtoolCached;
  if (!existsSync('/etc/debian_version') || !onPath('apt-get') || !onPath('dpkg-deb')) return null;
  mkdirSync(cacheDir, { recursive: true });
  const work = mkdtempSync(join(cacheDir, 'prometheus-download-'));
  try {
    log(`promtool: apt-get download prometheus into ${work}`);
    execFileSync('apt-get', ['download', 'prometheus'], { cwd: work, stdio: 'ignore', timeout: 300_000 });
    const deb = readdirSync(work).find((f) => f.endsWith('.deb'));
    if (!deb) return null;
    // Only the one binary out of the package (the server and its assets are not needed).
    const root = join(work, 'root');
    mkdirSync(root);
    execFileSync(
      'sh',
      ['-c', 'dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" ./usr/bin/promtool', 'sh', join(work, deb), root],
      { stdio: 'ignore', timeout: 120_000 },
    );
    try {
      renameSync(root, join(cacheDir, 'prometheus'));
    } catch {
      // another run put it there first
    }
    return isExecutable(promtoolCached) ? promtoolCached : null;
  } catch (err) {
    log(`promtool: not available (${String(err).split('\n')[0]})`);
    return null;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
