/** Where the CLI writes: results to stdout, progress and errors to stderr. Injected so tests can read both. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** Whether stdout is a terminal: colour and in-place redraws. */
  isTty?: boolean;
  /** The time countdowns are shown against (default: the API server's, from its Date headers). */
  now?: () => number;
  /** Ends a --watch or --wait loop early (tests; a person presses Ctrl-C). */
  signal?: AbortSignal;
}

export const processIo: CliIo = {
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
  isTty: process.stdout.isTTY,
};

/** A CLI failure with its exit code; main prints the message to stderr. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
