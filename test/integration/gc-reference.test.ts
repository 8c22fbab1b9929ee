/**
 * Reference mode: the same garbage-collection scenarios against
 * kube-controller-manager's own collector, on a second control plane of
 * this file's own (ours is not running there). Both must reach the same end
 * states; where they cannot, the scenario says so.
 */
import type { ResourceType } from '../../src/kube/types.js';
import { createNamespace, resourceType } from './harness.js';
import { installWidgetCrd, scenarios, type ScenarioContext } from './gc-scenarios.js';
import { startReferenceCluster, type ReferenceCluster } from './reference-cluster.js';

let ref: ReferenceCluster | undefined;
let cm: ResourceType;
let widget: ResourceType;

beforeAll(async () => {
  ref = await startReferenceCluster({ bundleCrd: false });
  cm = await resourceType(ref.env, 'v1', 'ConfigMap');
  widget = await installWidgetCrd(ref.env);
}, 120_000);

afterAll(async () => {
  await ref?.stop();
});

describe('garbage collector (reference: kube-controller-manager) on a real apiserver', () => {
  it.each(scenarios.map((s) => [s.name, s] as const))(
    '%s',
    async (_name, scenario) => {
      // kube-controller-manager re-discovers resources every 30 s and exposes
      // no way to ask whether it watches one yet: wait one period and a margin.
      const collectorWatches = () => new Promise<void>((resolve) => setTimeout(resolve, 35_000));
      const r = ref;
      if (!r) throw new Error('no control plane');
      const env = r.env;
      const ctx: ScenarioContext = {
        env,
        ns: await createNamespace(env, 'gc'),
        ns2: await createNamespace(env, 'gc2'),
        cm,
        widget,
        timeoutMs: 100_000,
        collectorWatches,
        collectorDown: r.collectorDown,
        collectorUp: r.collectorUp,
      };
      await scenario.run(ctx);
    },
    240_000,
  );
});
