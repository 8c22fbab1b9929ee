/**
 * Issue 9: a Bundle deleted with foreground or orphan propagation deletes
 * nothing it must keep, on the real apiserver with our garbage collector
 * (scenarios in deletion-propagation.ts; the same against
 * kube-controller-manager in bundle-deletion-propagation-kcm.test.ts).
 */
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { operatorFixture } from './operator.js';
import {
  aLosingBundleWithdrawsItsClaim,
  foregroundGuardKeepsPolicies,
  foregroundReleasesKeptPolicies,
  foregroundKeepsWhatAConflictingBundleClaims,
  foregroundKeepsWhatAnotherBundleLists,
  orphanLeavesOnlyUserReferences,
  type PropagationContext,
} from './deletion-propagation.js';

// The operator runs without a collector; the test runs ours beside it, so that it can pause it.
const f = operatorFixture('bdelprop');
let collector: GarbageCollector | undefined;

async function startCollector(): Promise<void> {
  if (collector) return;
  collector = new GarbageCollector(f.env.client, { mode: 'cluster', namespaces: [f.ns], workers: 2 });
  await collector.start();
}

async function stopCollector(): Promise<void> {
  await collector?.stop();
  collector = undefined;
}

beforeAll(startCollector);
afterAll(stopCollector);

// The collector and the operator act as the test's own user.
const context = (): PropagationContext => ({
  env: f.env,
  ns: f.ns,
  t: f.t,
  pauseCollector: stopCollector,
  resumeCollector: startCollector,
  collectorTimeoutMs: 30_000,
  collector: { user: 'admin', client: f.env.client },
});

it('foreground: an object another live Bundle lists is let go before the finalizer steps aside, and kept; the rest, delays included, is collected', async () => {
  await foregroundKeepsWhatAnotherBundleLists(context());
});

it('foreground, collector running throughout: an object a losing Bundle claims (non-controller reference) is kept, then taken by it', async () => {
  await foregroundKeepsWhatAConflictingBundleClaims(context());
});

it("a losing Bundle withdraws its claim when it stops listing the object, and when it is deleted; the winner's foreground deletion then collects it", async () => {
  await aLosingBundleWithdrawsItsClaim(context());
});

it("orphan: every object stays with only its user's references, and survives a former sibling's deletion", async () => {
  await orphanLeavesOnlyUserReferences(context());
});

it('foreground: Orphan and Approve objects are released from the cascade before the finalizer steps aside, and the collector keeps them', async () => {
  await foregroundReleasesKeptPolicies(context());
});

it("foreground, collector running throughout, the chart's deletion guard installed: Orphan and Approve objects are refused to the collector until the finalizer has released them, and kept", async () => {
  await foregroundGuardKeepsPolicies(context());
});
