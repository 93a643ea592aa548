import { pino, type Logger } from 'pino';
import type { Config } from '../config/env.ts';

/** JSON logs on stdout. Credentials are redacted defensively even though no code logs headers. */
export function createLogger(config: Pick<Config, 'logLevel'>, name = 'gws'): Logger {
  return pino({
    name,
    level: config.logLevel,
    redact: { paths: ['*.authorization', '*.Authorization', 'authorization', '*.secret', 'secret'], censor: '[redacted]' },
  });
}
