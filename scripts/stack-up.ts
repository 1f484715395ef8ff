/**
 * Brings the local stack up (scripts/stack.ts), prints where it is, and keeps it up until Ctrl-C or
 * SIGTERM, which stop what this process started (services it merely reused keep running). Once
 * `npm run stack:down` (or anything else) has stopped every service it watches, it exits too.
 */
import { ensureStack, runningServices } from './stack.js';

// With the test mail server, so `npm test -- <files>` against this stack finds it.
const stack = await ensureStack({ mail: true }).catch((err: unknown) => {
  console.error(`[stack] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

console.log(`DATABASE_URL=${stack.databaseUrl}`);
console.log(`REDIS_URL=${stack.redisUrl}`);
console.log(`TEMPORAL_ADDRESS=${stack.temporalAddress}`);
if (stack.temporalUiUrl) console.log(`TEMPORAL_UI=${stack.temporalUiUrl}`);
if (stack.mail)
  console.log(`MAIL=smtp://${stack.mail.host}:${stack.mail.smtpPort} imap://${stack.mail.host}:${stack.mail.imapPort}`);
console.error('[stack] up; Ctrl-C to stop what this process started');

// Keeps Node alive (a pending promise alone would not), and ends this process when the services it
// watches (those with a pid file when it came up: not a server someone runs outside .data) are gone.
const watched = runningServices();
let stopping = false;
const keepAlive = setInterval(() => {
  if (stopping || !watched.length || runningServices().some((svc) => watched.includes(svc))) return;
  console.error('[stack] every service was stopped elsewhere (npm run stack:down); exiting');
  process.exit(0);
}, 2000);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    clearInterval(keepAlive);
    stack.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`[stack] stopping failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  });
}
