// The stack's Redis (scripts/stack.ts): redis-server (installed with apt-get when missing) on loopback, nothing saved.
import { existsSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import {
  assertNoOtherInstance,
  dataDir,
  envPort,
  onPath,
  record,
  run,
  spawnDetached,
  waitReady,
  type Log,
  type Started,
} from './processes.js';

export async function ensureRedis(log: Log, started: Started[]): Promise<string> {
  if (process.env.REDIS_URL) return process.env.REDIS_URL;
  const port = envPort('REDIS_PORT_EMBEDDED', 6389);
  const url = `redis://127.0.0.1:${port}`;
  if (await redisPing(port)) {
    log(`redis: reusing the server on 127.0.0.1:${port}`);
    return url;
  }
  assertNoOtherInstance('redis', port);
  const bin = await redisServerBinary(log);
  const dir = join(dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const logFile = join(dir, 'redis.log');
  log(`redis: starting on 127.0.0.1:${port} (log ${logFile})`);
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  args.push('--dir', dir, '--logfile', logFile, '--daemonize', 'no');
  const pid = await spawnDetached(bin, args, logFile);
  record(started, 'redis', pid);
  await waitReady('redis', pid, logFile, 15_000, () => redisPing(port));
  return url;
}

/** PING over a raw socket: true on +PONG, false if nothing listens, an error if something else does. */
function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let reply = '';
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (!reply.includes('\n')) return;
      socket.destroy();
      if (reply.startsWith('+PONG')) return resolve(true);
      reject(
        new Error(
          `redis: port ${port} answers ${JSON.stringify(reply.trim().slice(0, 80))} to PING, not as our ` +
            'embedded server; stop it, or set REDIS_PORT_EMBEDDED or REDIS_URL',
        ),
      );
    });
  });
}

async function redisServerBinary(log: Log): Promise<string> {
  const found = onPath('redis-server');
  if (found) return found;
  if (process.getuid?.() === 0 && existsSync('/etc/debian_version')) {
    const logFile = join(dataDir, 'apt.log');
    log(`redis: redis-server is missing; installing it with apt-get (log ${logFile})`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await run('apt-get', ['update'], logFile, { env });
    await run('apt-get', ['install', '-y', 'redis-server'], logFile, { env });
    const installed = onPath('redis-server');
    if (installed) return installed;
  }
  throw new Error('redis: redis-server is not on PATH; install it (apt-get install redis-server) or set REDIS_URL');
}
