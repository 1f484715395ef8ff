import { pino } from 'pino';
import { loadConfig } from './config.js';

// JSON logs; credentials and bodies that may carry secrets are redacted by path. In production the
// lines are buffered (written in 4 KiB batches, flushed on exit) rather than one write per request;
// elsewhere they are written at once, so a crash in development or a test loses nothing.
const buffered = process.env.NODE_ENV === 'production' && process.env.LOG_SYNC !== '1';
export const logger = pino(
  {
    level: loadConfig().logLevel,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token', '*.secret', '*.refresh_token'],
      censor: '[redacted]',
    },
  },
  pino.destination({ dest: 1, sync: !buffered, minLength: buffered ? 4096 : 0 }),
);
export type Logger = typeof logger;
