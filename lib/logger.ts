import { pino } from 'pino';
import { loadConfig } from './config.js';

// JSON logs; credentials and bodies that may carry secrets are redacted by path.
export const logger = pino({
  level: loadConfig().logLevel,
  redact: {
    paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token', '*.secret', '*.refresh_token'],
    censor: '[redacted]',
  },
});
export type Logger = typeof logger;
