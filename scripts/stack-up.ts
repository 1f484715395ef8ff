/**
 * Brings the local stack up (scripts/stack.ts), prints where it is, and keeps it up until Ctrl-C or
 * SIGTERM, which stop what this process started (services it merely reused keep running).
 */
import { ensureStack } from './stack.js';

// With the test mail server, so `npm test -- <files>` against this stack finds it.
const stack = await ensureStack({ mail: true }).catch((err: unknown) => {
  console.error(`[stack] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

console.log(`DATABASE_URL=${stack.databaseUrl}`);
console.log(`REDIS_URL=${stack.redisUrl}`);
console.log(`TEMPORAL_ADDRESS=${stack.temporalAddress}`);
if (stack.temporalUiUrl) console.log(`TEMPORAL_UI=${stack.temporalUiUrl}`);
if (stack.mail) console.log(`MAIL=smtp://${stack.mail.host}:${stack.mail.smtpPort} imap://${stack.mail.host}:${stack.mail.imapPort}`);
console.error('[stack] up; Ctrl-C to stop what this process started');

const keepAlive = setInterval(() => {}, 1 << 30); // a pending promise alone would let Node exit
let stopping = false;
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
