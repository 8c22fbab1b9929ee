/** The collector's log port: the engine and its event writer (gc-events.ts) both log through it. */
export type GcLogLevel = 'debug' | 'info' | 'warn' | 'error';
export type GcLog = (level: GcLogLevel, message: string, fields?: Record<string, unknown>) => void;
