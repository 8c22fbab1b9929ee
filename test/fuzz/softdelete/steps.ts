/**
 * The steps of a soft-delete seed and their generator. The generator reads
 * only the model's spec-level state (which Bundles exist, what they list,
 * whether they are valid, which Gates the test opened), never timings or
 * observations, so a seed always produces the same steps.
 */
import type { Random } from '../random.js';
import { defaultsText, delayText, ruleText, type Defaults, type Delay, type Entry, type Propagation, type Rule, type SoftDeleteModel, type Spoil } from './model.js';

export type Step =
  | { kind: 'add'; bundle: string; object: string; delay: Delay; rule: Rule; gated: boolean }
  | { kind: 'remove'; bundle: string; object: string }
  | { kind: 'move'; from: string; to: string; object: string; delay: Delay; rule: Rule; gated: boolean; addFirst: boolean }
  | { kind: 'set-delay'; bundle: string; object: string; delay: Delay; rule: Rule }
  /** Writes smith.atlassian.com/deletionApproved on the live object: now, or backdated (before any stamp it may carry). */
  | { kind: 'approve'; object: string; backdated: boolean }
  | { kind: 'set-gated'; bundle: string; object: string; gated: boolean }
  | { kind: 'gate'; bundle: string; open: boolean }
  | { kind: 'delete-bundle'; bundle: string; propagation: Propagation }
  | { kind: 'reapply'; bundle: string; entries: Entry[]; spoil: Spoil; defaults: Defaults }
  /** Changes a live Bundle's spec.deletionDefaults. */
  | { kind: 'set-defaults'; bundle: string; defaults: Defaults }
  | { kind: 'spoil'; bundle: string; how: Exclude<Spoil, 'none'> }
  | { kind: 'repair'; bundle: string }
  | { kind: 'kill'; afterMs: number; downMs: number }
  | { kind: 'sleep'; ms: number }
  | { kind: 'settle' };

/** Steps that write a Bundle may be followed at once by a settle (wait for the operator), or not (races). */
export interface PlannedStep {
  step: Step;
  settle: boolean;
}

const SPOIL_TEXT: Record<Exclude<Spoil, 'none'>, string> = {
  invalid: 'invalid (a resource references a missing one)',
  failing: 'fail to apply (a ConfigMap with a key the apiserver rejects)',
};

export function describeStep(s: Step): string {
  const gate = (g: boolean) => (g ? ', behind the gate' : '');
  switch (s.kind) {
    case 'add':
      return `add ${s.object} to ${s.bundle} (${delayText(s.delay)}${ruleText(s.rule)}${gate(s.gated)})`;
    case 'remove':
      return `remove ${s.object} from ${s.bundle}`;
    case 'move':
      return `move ${s.object} from ${s.from} to ${s.to} (${delayText(s.delay)}${ruleText(s.rule)}${gate(s.gated)}; ${s.addFirst ? 'add to the new Bundle first' : 'remove from the old Bundle first'})`;
    case 'set-delay':
      return `set ${s.object} in ${s.bundle} to ${delayText(s.delay)}${ruleText(s.rule)}`;
    case 'approve':
      return `approve the deletion of ${s.object} (${s.backdated ? 'backdated a minute' : 'now'})`;
    case 'set-gated':
      return `${s.gated ? 'put' : 'take'} ${s.object} in ${s.bundle} ${s.gated ? 'behind' : 'out from behind'} the gate`;
    case 'gate':
      return `${s.open ? 'open' : 'close'} the gate of ${s.bundle} (Ready=${s.open ? 'true' : 'false'})`;
    case 'delete-bundle':
      return `delete Bundle ${s.bundle} (${s.propagation}) and wait until it is gone`;
    case 'reapply':
      return `re-apply Bundle ${s.bundle} with ${s.entries.filter((e) => e.kind === 'ConfigMap').map((e) => `${e.object} (${delayText(e.delay)}${ruleText(e.rule)}${gate(e.gated)})`).join(', ') || 'only its gate'}${s.spoil === 'none' ? '' : `, ${SPOIL_TEXT[s.spoil]}`}, ${defaultsText(s.defaults)}`;
    case 'set-defaults':
      return `set the deletion defaults of ${s.bundle}: ${defaultsText(s.defaults)}`;
    case 'spoil':
      return `make ${s.bundle} ${SPOIL_TEXT[s.how]}`;
    case 'repair':
      return `make ${s.bundle} whole again (drop the broken resource)`;
    case 'kill':
      return `SIGKILL the operator ${s.afterMs} ms later, restart it ${s.downMs} ms after that`;
    case 'sleep':
      return `sleep ${s.ms} ms`;
    case 'settle':
      return 'settle (every Bundle observed by the operator)';
  }
}

function randomDelay(rnd: Random): Delay {
  return rnd.weighted<() => Delay>([
    [3, () => ({ kind: 'none' })],
    [7, () => {
      const ms = rnd.int(2, 10) * 500;
      const text = ms % 1000 === 0 && rnd.chance(0.7) ? `${ms / 1000}s` : `${ms}ms`;
      return { kind: 'valid', text, ms };
    }],
    [2, () => ({ kind: 'invalid', text: rnd.pick(['banana', '-2s', '']) })],
  ])();
}

/** Mostly none (Smith's manifests have none), else a delay, a rule or both. */
export function randomDefaults(rnd: Random): Defaults {
  if (!rnd.chance(0.35)) return {};
  const delay = rnd.chance(0.5) ? randomDelay(rnd) : undefined;
  const rule = rnd.chance(0.6) ? rnd.pick(['Orphan', 'Approve', 'BundleReady'] as const) : undefined;
  return { ...(delay && delay.kind === 'valid' ? { delay } : {}), ...(rule ? { rule } : {}) };
}

/** Mostly plain deletes, as in Smith; the policies of issue 16 often enough that most seeds meet each. */
function randomRule(rnd: Random): Rule {
  return rnd.weighted<Rule>([[5, 'Delete'], [1.5, 'Orphan'], [2, 'Approve'], [1.5, 'BundleReady']]);
}

export class StepGenerator {
  /** What each Bundle listed when it was deleted, to re-apply it. */
  private readonly lastSpec = new Map<string, Entry[]>();
  /** Its deletion defaults then. */
  private readonly lastDefaults = new Map<string, Defaults>();
  /** Steps decided ahead (the second half of a pair), taken before drawing new ones. */
  private readonly queued: Step[] = [];

  constructor(
    private readonly rnd: Random,
    private readonly model: SoftDeleteModel,
    private readonly configMaps: readonly string[],
    private readonly gateOf: (bundle: string) => string,
  ) {}

  /** The first apply of a Bundle: its gate and a random handful of objects no other Bundle lists. */
  initialSpec(bundle: string, taken: ReadonlySet<string>): Entry[] {
    const entries: Entry[] = [{ object: this.gateOf(bundle), kind: 'Gate', delay: { kind: 'none' }, gated: false }];
    for (const object of this.configMaps) {
      if (taken.has(object) || !this.rnd.chance(0.5)) continue;
      entries.push({ object, kind: 'ConfigMap', delay: randomDelay(this.rnd), rule: randomRule(this.rnd), gated: this.rnd.chance(0.25) });
    }
    return entries;
  }

  next(): PlannedStep {
    const rnd = this.rnd;
    const queued = this.queued.shift();
    if (queued) return { step: queued, settle: false };
    const bundles = [...this.model.bundles.values()];
    const live = bundles.filter((b) => b.exists);
    const pickLive = () => (live.length === 0 ? undefined : rnd.pick(live));
    const listedIn = (b: (typeof bundles)[number]) => b.entries.filter((e) => e.kind === 'ConfigMap');
    const choices: [number, () => Step | undefined][] = [
      [3, () => {
        const b = pickLive();
        if (!b) return undefined;
        const free = this.configMaps.filter((o) => !b.entries.some((e) => e.object === o));
        // Mostly objects nobody lists (or that wait for deletion); sometimes one another Bundle lists (a conflict).
        const unlisted = free.filter((o) => this.model.listers(o).length === 0);
        const pool = unlisted.length > 0 && rnd.chance(0.8) ? unlisted : free;
        if (pool.length === 0) return undefined;
        return { kind: 'add', bundle: b.name, object: rnd.pick(pool), delay: randomDelay(rnd), rule: randomRule(rnd), gated: rnd.chance(0.3) };
      }],
      [3, () => {
        const b = pickLive();
        if (!b) return undefined;
        const listed = listedIn(b);
        if (listed.length === 0) return undefined;
        return { kind: 'remove', bundle: b.name, object: rnd.pick(listed).object };
      }],
      [1.8, () => {
        if (live.length < 2) return undefined;
        const [from, to] = rnd.shuffle(live);
        if (!from || !to) return undefined;
        const movable = listedIn(from).filter((e) => !to.entries.some((t) => t.object === e.object));
        if (movable.length === 0) return undefined;
        const e = rnd.pick(movable);
        const delay = rnd.chance(0.6) ? e.delay : randomDelay(rnd);
        const rule = rnd.chance(0.6) ? (e.rule ?? 'Delete') : randomRule(rnd);
        return { kind: 'move', from: from.name, to: to.name, object: e.object, delay, rule, gated: rnd.chance(0.3), addFirst: rnd.chance(0.4) };
      }],
      [2, () => {
        const b = pickLive();
        if (!b) return undefined;
        const listed = listedIn(b);
        if (listed.length === 0) return undefined;
        return { kind: 'set-delay', bundle: b.name, object: rnd.pick(listed).object, delay: randomDelay(rnd), rule: randomRule(rnd) };
      }],
      [2, () => {
        // Mostly an object that waits for deletion; sometimes one still listed (an approval before the stamp never counts).
        const waiting = this.configMaps.filter((o) => ['removed', 'released'].includes(this.model.object(o).standing.kind));
        const pool = waiting.length > 0 && rnd.chance(0.8) ? waiting : this.configMaps;
        return { kind: 'approve', object: rnd.pick(pool), backdated: rnd.chance(0.25) };
      }],
      [1.5, () => {
        const b = pickLive();
        if (!b) return undefined;
        const listed = listedIn(b);
        if (listed.length === 0) return undefined;
        const e = rnd.pick(listed);
        return { kind: 'set-gated', bundle: b.name, object: e.object, gated: !e.gated };
      }],
      [1.5, () => {
        const b = pickLive();
        if (!b) return undefined;
        return { kind: 'gate', bundle: b.name, open: !b.gateReady };
      }],
      [2, () => (live.length === 0 ? undefined : { kind: 'delete-bundle', bundle: rnd.pick(live).name, propagation: rnd.weighted<Propagation>([[6, 'background'], [2.5, 'foreground'], [1.5, 'orphan']]) })],
      [6, () => {
        const gone = bundles.filter((b) => !b.exists);
        if (gone.length === 0) return undefined;
        const b = rnd.pick(gone);
        const last = this.lastSpec.get(b.name);
        // Mostly the manifest as it was (adopting what it released back), often with objects now behind
        // the new Gate, which is not Ready yet; sometimes a fresh one.
        const entries = last && rnd.chance(0.85) ? last : this.initialSpec(b.name, new Set());
        const spoil = rnd.weighted<Spoil>([[8, 'none'], [1, 'invalid'], [1, 'failing']]);
        const defaults = rnd.chance(0.7) ? (this.lastDefaults.get(b.name) ?? {}) : randomDefaults(rnd);
        return { kind: 'reapply', bundle: b.name, entries: entries.map((e) => ({ ...e, gated: e.kind === 'ConfigMap' && rnd.chance(e.gated ? 0.3 : 0.6) ? !e.gated : e.gated })), spoil, defaults };
      }],
      [0.7, () => {
        const whole = live.filter((b) => b.spoil === 'none');
        return whole.length === 0 ? undefined : { kind: 'spoil', bundle: rnd.pick(whole).name, how: rnd.pick(['invalid', 'failing'] as const) };
      }],
      [2, () => {
        const spoiled = live.filter((b) => b.spoil !== 'none');
        return spoiled.length === 0 ? undefined : { kind: 'repair', bundle: rnd.pick(spoiled).name };
      }],
      [1, () => {
        const b = pickLive();
        return b ? { kind: 'set-defaults', bundle: b.name, defaults: randomDefaults(rnd) } : undefined;
      }],
      [1.2, () => ({ kind: 'kill', afterMs: rnd.int(0, 400), downMs: rnd.int(0, 2500) })],
      [3.5, () => ({ kind: 'sleep', ms: rnd.int(3, 25) * 100 })],
      [1, () => ({ kind: 'settle' })],
    ];
    for (;;) {
      const step = rnd.weighted(choices)();
      if (!step) continue;
      if (step.kind === 'delete-bundle') {
        const last = this.model.bundle(step.bundle).entries.map((e) => ({ ...e }));
        this.lastSpec.set(step.bundle, last);
        // Often the Bundle comes straight back with what it released now behind its new Gate, which is
        // not Ready: listed again, but blocked (the countdown must be cancelled all the same).
        const defaults = this.model.bundle(step.bundle).defaults;
        this.lastDefaults.set(step.bundle, defaults);
        if (rnd.chance(0.4)) this.queued.push({ kind: 'reapply', bundle: step.bundle, entries: last.map((e) => ({ ...e, gated: e.kind === 'ConfigMap' })), spoil: 'none', defaults });
      }
      const writes = step.kind !== 'kill' && step.kind !== 'sleep' && step.kind !== 'settle' && step.kind !== 'delete-bundle' && step.kind !== 'approve';
      return { step, settle: writes && rnd.chance(0.35) };
    }
  }
}
