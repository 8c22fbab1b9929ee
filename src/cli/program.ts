/**
 * The command line: commander's program built from the declarations in
 * commands.ts, run once per call (so tests can run it in process). Exit
 * codes: 0 ok, 1 problems found or an operation failed, 2 usage error;
 * diff: 0 no changes, 1 changes, 2 error.
 */
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../api/crd-paths.js';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type ParsedCommand } from './args.js';
import { COMMANDS, flagsOf, formatExamples, globalOptions, type CommandDeclaration } from './commands.js';
import { clusterNames } from './completion-names.js';
import { completionCommand, completeWords } from './completion.js';
import { CliError, type CliIo } from './io.js';

export interface Invocation {
  /** "bundlesmith", or "kubectl bundle" when run as the kubectl plugin. */
  name: string;
}

/** The package's version, from its package.json. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

const HELP_WIDTH = 80;

/** A usage error a command's own check found: carried to runCli as commander's own errors are. */
class UsageError extends Error {}

/**
 * The program as commander declares it. `run` receives the declaration and
 * the parsed command line of the command that was given.
 */
export function buildProgram(
  name: string,
  io: CliIo,
  run: (declaration: CommandDeclaration, parsed: ParsedCommand) => Promise<void>,
): Command {
  const program = new Command(name)
    .description('bundlesmith: check, diff and inspect Bundles (smith.atlassian.com/v1), and manage their pending deletions.')
    .version(packageVersion(), '--version', 'print the version')
    .configureOutput({
      writeOut: (text) => io.out(text.replace(/\n$/, '')),
      writeErr: (text) => io.err(text.replace(/\n$/, '')),
      // One width everywhere, so the help and docs/cli.md (generated from it) read the same.
      getOutHelpWidth: () => HELP_WIDTH,
      getErrHelpWidth: () => HELP_WIDTH,
    })
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .showSuggestionAfterError(true)
    .exitOverride()
    .helpCommand('help [command]', 'help for a command');
  for (const option of globalOptions()) program.addOption(option);
  program.addHelpText(
    'after',
    `\nRun "${name} help COMMAND" or "${name} COMMAND --help" for a command's flags and examples.\nExit codes: 0 ok, 1 problems found or an operation failed, 2 usage error (diff: 0 no changes, 1 changes, 2 error).`,
  );

  for (const declaration of COMMANDS) {
    const command = program.command(declaration.name).summary(declaration.summary).description(declaration.description);
    if (declaration.arguments !== undefined) command.arguments(declaration.arguments);
    for (const option of declaration.options()) command.addOption(option);
    command.addHelpText('after', `\n${formatExamples(declaration, name)}`);
    command.action(async (...args: unknown[]) => {
      const self = args[args.length - 1] as Command;
      const parsed: ParsedCommand = { command: declaration.name, positionals: self.args, flags: flagsOf(self) };
      const problem = declaration.check?.(parsed);
      if (problem !== undefined) throw new UsageError(problem);
      await run(declaration, parsed);
    });
  }
  program.addCommand(completionCommand(name).copyInheritedSettings(program));
  return program;
}

/** The command a command line names, for "see NAME COMMAND --help". */
function commandNamed(argv: readonly string[]): string | undefined {
  return argv.find((a) => COMMANDS.some((c) => c.name === a) || a === 'completion');
}

export async function runCli(argv: readonly string[], io: CliIo, invocation: Invocation = { name: 'bundlesmith' }): Promise<number> {
  const { name } = invocation;
  if (argv[0] === '__complete') {
    for (const line of await completeWords(
      buildProgram(name, io, () => Promise.resolve()),
      argv.slice(1),
      clusterNames,
    ))
      io.out(line);
    return EXIT_OK;
  }
  let code = EXIT_OK;
  const program = buildProgram(name, io, async (declaration, parsed) => {
    code = await declaration.run(parsed, io);
  });
  const seeHelp = (): void => {
    const command = commandNamed(argv);
    io.err(`See '${name}${command ? ` ${command}` : ''} --help' for usage.`);
  };
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help asked for, or the version: commander printed it. Help because no command was given: a usage error.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
        return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
      // commander printed the error (and any "did you mean").
      seeHelp();
      return EXIT_USAGE;
    }
    if (err instanceof UsageError) {
      io.err(`error: ${err.message}`);
      seeHelp();
      return EXIT_USAGE;
    }
    if (err instanceof CliError) {
      io.err(`${name}: ${err.message}`);
      return err.exitCode;
    }
    io.err(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    return EXIT_PROBLEMS;
  }
}
