import { pino } from 'pino';
import { loadConfig } from './config.js';

// JSON logs. In production the lines are buffered (written in 16 KiB batches, at least every
// FLUSH_MS, and flushed on exit) rather than one write per request: each write is a system call on
// the event loop's thread, which profiles of the API at saturation showed as a tenth of its CPU
// with 4 KiB batches. Elsewhere they are written at once, so a crash in development or a test loses
// nothing.
const { logBuffered: buffered, logLevel: level } = loadConfig();
const BUFFER_BYTES = 16 * 1024;
const FLUSH_MS = 1_000;
const destination = pino.destination({
  dest: 1,
  sync: !buffered,
  minLength: buffered ? BUFFER_BYTES : 0,
  maxWrite: 4 * BUFFER_BYTES,
});
// A quiet process's lines are not held back longer than FLUSH_MS.
if (buffered)
  setInterval(() => {
    try {
      destination.flush();
    } catch {
      /* closed at exit */
    }
  }, FLUSH_MS).unref();

// Application logs may carry request data, so credentials and secrets are redacted by path.
export const logger = pino(
  {
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        '*.password',
        '*.token',
        '*.secret',
        '*.refresh_token',
      ],
      censor: '[redacted]',
    },
  },
  destination,
);
export type Logger = typeof logger;

/**
 * The access log: one line per request built from fixed, safe fields (method, path, status, timing,
 * ids), so it skips the redaction pass that every application log line pays for.
 */
export const accessLogger = pino({ level }, destination);

/**
 * For process entry points (API, worker): a promise that rejects with nobody to handle it (a
 * background task that met a dependency outage) is logged, not fatal. Node's default ends the
 * process, which would turn a PostgreSQL or Temporal restart into a crash; the work is taken up again
 * by its owner (the next request, sweep or activity attempt). An uncaught exception stays fatal.
 */
export function logUnhandledRejections(log: Logger = logger): void {
  process.on('unhandledRejection', (reason) =>
    log.error({ err: reason }, 'unhandled promise rejection; the process goes on'),
  );
}
