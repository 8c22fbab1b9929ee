/**
 * The logging the runtime needs, declared here so that runtime code does not
 * import observability (which itself builds on runtime types). pino's
 * Logger satisfies it.
 */
export type LogFields = Record<string, unknown>;

export interface RuntimeLogger {
  debug(fields: LogFields, message: string): void;
  info(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
}
