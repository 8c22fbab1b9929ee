/**
 * Shell completion from the declared commands. `__complete WORDS...` answers
 * as a cobra program does (one candidate a line, "value<TAB>description",
 * then ":DIRECTIVE"), which is what kubectl expects of a plugin's
 * `kubectl_complete-bundle` executable; the bash, zsh and fish scripts of
 * `completion SHELL` ask the same.
 */
import { Argument, Command, type Option } from 'commander';

/** cobra's ShellCompDirective bits. */
const FILES = 0;
const NO_FILES = 4;

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

function optionsOf(command: Command, program: Command): readonly Option[] {
  return command === program ? program.options : [...command.options, ...program.options];
}

function findOption(options: readonly Option[], flag: string): Option | undefined {
  return options.find((o) => o.long === flag || o.short === flag);
}

function takesValue(option: Option | undefined): boolean {
  return option !== undefined && (option.required || option.optional);
}

/** What the command line so far says about where to look, for candidates read from the cluster. */
export interface CompletionContext {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

/** Names read from the cluster: namespaces (for -n) and Bundles (for tree and status). Empty when it cannot answer. */
export interface ClusterNames {
  namespaces(at: CompletionContext): Promise<string[]>;
  bundles(at: CompletionContext): Promise<string[]>;
}

const CLUSTER_FLAGS: Record<string, keyof CompletionContext> = {
  '--kubeconfig': 'kubeconfig',
  '--context': 'context',
  '-n': 'namespace',
  '--namespace': 'namespace',
};

/** Candidates for the last of `words` (the word being typed, maybe empty), and the directive line. */
export async function completeWords(program: Command, words: readonly string[], names: ClusterNames): Promise<string[]> {
  const partial = words[words.length - 1] ?? '';
  const before = words.slice(0, -1);
  let command = program;
  const positionals: string[] = [];
  let valueOf: Option | undefined;
  const at: CompletionContext = {};
  for (const word of before) {
    if (valueOf !== undefined) {
      const key = CLUSTER_FLAGS[valueOf.long ?? ''];
      if (key !== undefined) at[key] = word;
      valueOf = undefined;
      continue;
    }
    if (word.startsWith('-') && word !== '-') {
      // --flag=value carries its value; --flag takes the next word when it has one.
      const [flag = '', value] = word.split(/=(.*)/s);
      const key = CLUSTER_FLAGS[flag];
      const option = findOption(optionsOf(command, program), flag);
      if (value !== undefined) {
        if (key !== undefined) at[key] = value;
      } else if (takesValue(option)) {
        valueOf = option;
      }
      continue;
    }
    const sub = command === program ? program.commands.find((c) => c.name() === word) : undefined;
    if (sub !== undefined) command = sub;
    else positionals.push(word);
  }
  const matching = (candidates: readonly [string, string][]): string[] =>
    candidates
      .filter(([value]) => value.startsWith(partial))
      .map(([value, description]) => (description ? `${value}\t${description}` : value));

  if (valueOf !== undefined) {
    if (valueOf.argChoices) return [...matching(valueOf.argChoices.map((c) => [c, ''])), `:${NO_FILES}`];
    if (valueOf.long === '--namespace') return [...matching((await names.namespaces(at)).map((n) => [n, ''])), `:${NO_FILES}`];
    return [`:${valueOf.long === '--kubeconfig' ? FILES : NO_FILES}`];
  }
  if (partial.startsWith('-')) {
    const flags = optionsOf(command, program).filter((o) => !o.hidden && o.long !== undefined);
    return [...matching([...flags.map((o): [string, string] => [o.long ?? '', o.description]), ['--help', 'show help']]), `:${NO_FILES}`];
  }
  if (command === program) {
    return [
      ...matching([...program.commands.map((c): [string, string] => [c.name(), c.summary()]), ['help', 'help for a command']]),
      `:${NO_FILES}`,
    ];
  }
  const name = command.name();
  if (name === 'help') return [...matching(program.commands.map((c) => [c.name(), c.summary()])), `:${NO_FILES}`];
  if (name === 'completion') return [...matching(SHELLS.map((s) => [s, ''])), `:${NO_FILES}`];
  const declared = command.registeredArguments;
  if (declared.some((a) => a.name() === 'file')) return [`:${FILES}`];
  // tree BUNDLE and status [BUNDLE]: the Bundles of the namespace given (or the context's).
  if (declared[0]?.name() === 'bundle' && positionals.length === 0)
    return [...matching((await names.bundles(at)).map((n) => [n, ''])), `:${NO_FILES}`];
  return [`:${NO_FILES}`];
}

function script(shell: Shell, program: string): string {
  const fn = `_${program.replace(/[^A-Za-z0-9]/g, '_')}_complete`;
  switch (shell) {
    case 'bash':
      return `# bash completion for ${program}: source <(${program} completion bash)
${fn}() {
  local cur=\${COMP_WORDS[COMP_CWORD]} out directive IFS=$'\\n'
  out=$(${program} __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) || return
  directive=\${out##*:}
  local candidates=( $(printf '%s\\n' "$out" | sed -e '$d' -e 's/\\t.*//') )
  if (( \${#candidates[@]} > 0 )); then
    COMPREPLY=( $(compgen -W "\${candidates[*]}" -- "$cur") )
  elif (( (directive & 4) == 0 )); then
    COMPREPLY=( $(compgen -f -- "$cur") )
  fi
}
complete -F ${fn} ${program}`;
    case 'zsh':
      return `#compdef ${program}
# zsh completion for ${program}: source <(${program} completion zsh)
${fn}() {
  local out directive
  local -a lines candidates
  out=$(${program} __complete "\${(@)words[2,CURRENT]}" 2>/dev/null) || return
  lines=("\${(@f)out}")
  directive=\${lines[-1]#:}
  candidates=("\${(@)lines[1,-2]}")
  candidates=("\${(@)candidates//:/\\\\:}")
  candidates=("\${(@)candidates/$'\\t'/:}")
  if (( \${#candidates} )); then
    _describe '${program}' candidates
  elif (( (directive & 4) == 0 )); then
    _files
  fi
}
compdef ${fn} ${program}`;
    case 'fish':
      return `# fish completion for ${program}: ${program} completion fish | source
function ${fn}
    set -l out (${program} __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)
    set -l directive (string replace ':' '' -- $out[-1])
    if test (count $out) -gt 1
        printf '%s\\n' $out[1..-2]
    else if test (math "floor($directive / 4) % 2") -eq 0
        __fish_complete_path (commandline -ct)
    end
end
complete -c ${program} -f -a '(${fn})'`;
  }
}

/** `completion bash|zsh|fish`: the script that makes the shell complete the program's commands and flags. */
export function completionCommand(program: string): Command {
  // As the kubectl plugin, kubectl's own completion asks kubectl_complete-bundle: the script is the standalone program's.
  const target = program === 'kubectl bundle' ? 'bundlesmith' : program;
  return new Command('completion')
    .summary('print a shell completion script (bash, zsh or fish)')
    .description(
      `Prints the script that makes SHELL complete ${target}'s commands, flags and their values, with namespaces (-n) and Bundle names (tree, status) read from the cluster. As a kubectl plugin, "kubectl bundle" is completed by kubectl's own completion, which runs the kubectl_complete-bundle executable installed beside kubectl-bundle.`,
    )
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(SHELLS))
    .addHelpText(
      'after',
      `\nExamples:\n  # bash, in ~/.bashrc\n  source <(${target} completion bash)\n\n  # zsh, in ~/.zshrc\n  source <(${target} completion zsh)\n\n  # fish\n  ${target} completion fish > ~/.config/fish/completions/${target}.fish`,
    )
    .action(function (this: Command, shell: Shell) {
      // Through the program's writer, so the script goes where the rest of the output goes.
      this.parent?.configureOutput().writeOut?.(`${script(shell, target)}\n`);
    });
}
