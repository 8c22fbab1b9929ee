/** Structured JSON logs (pino). Each controller logs with the object it works on as fields. */
import { pino, type Logger } from 'pino';

export type { Logger };
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export function createLogger(level: LogLevel = 'info', name = 'bundlesmith'): Logger {
  return pino({ name, level, base: { component: name }, timestamp: pino.stdTimeFunctions.isoTime });
}

/** A logger that writes nothing, for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
