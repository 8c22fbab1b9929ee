/**
 * Structured JSON logs (pino), one object per line on stdout. The level is
 * its name ("level":"info", as controller-runtime's zap logger writes it,
 * not pino's number), and an object a line is about is named by separate
 * `namespace` and `name` keys (objectRef), never one "namespace/name" string,
 * so that a log pipeline can filter on either.
 */
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export function createLogger(level: LogLevel = 'info', name = 'bundlesmith', destination?: DestinationStream): Logger {
  // No pino `name`: it writes a `name` key on every line, which the object keys below (objectRef) would duplicate.
  const options = {
    level,
    base: { component: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** The log fields naming a namespaced object by a "namespace/name" key (a work queue's key). */
export function objectRef(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** A logger that writes nothing, for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
