/**
 * Issue 9, the Bundle finalizer under orphan and foreground propagation with
 * kube-controller-manager as the collector: a control plane of this file's
 * own where kube-controller-manager's garbage collector runs (ours does not).
 * Scenarios in deletion-propagation.ts.
 */
import { referenceFixture } from './reference-cluster.js';
import {
  aLosingBundleWithdrawsItsClaim,
  foregroundGuardKeepsPolicies,
  foregroundReleasesKeptPolicies,
  foregroundKeepsWhatAConflictingBundleClaims,
  foregroundKeepsWhatAnotherBundleLists,
  orphanLeavesOnlyUserReferences,
  type PropagationContext,
} from './deletion-propagation.js';

const f = referenceFixture('bdelkcm');

const context = (): PropagationContext => ({
  env: f.env,
  ns: f.ns,
  t: f.t,
  pauseCollector: f.ref.collectorDown,
  resumeCollector: f.ref.collectorUp,
  collectorTimeoutMs: 90_000,
  // kube-controller-manager runs as its own user (no service-account credentials).
  collector: { user: 'system:kube-controller-manager', client: f.env.client.impersonating({ user: 'system:kube-controller-manager' }) },
});

it("a losing Bundle withdraws its claim when it stops listing the object, and when it is deleted; the winner's foreground deletion then collects it", async () => {
  await aLosingBundleWithdrawsItsClaim(context());
});

it("orphan: every object stays with only its user's references, and kube-controller-manager keeps it when a former sibling is deleted", async () => {
  await orphanLeavesOnlyUserReferences(context());
}, 180_000);

it('foreground: an object another live Bundle lists is let go before the finalizer steps aside, and kube-controller-manager keeps it', async () => {
  await foregroundKeepsWhatAnotherBundleLists(context());
}, 240_000);

it('foreground, kube-controller-manager running throughout: an object a losing Bundle claims (non-controller reference) is kept, then taken by it', async () => {
  await foregroundKeepsWhatAConflictingBundleClaims(context());
}, 240_000);

it('foreground: Orphan and Approve objects are released from the cascade before the finalizer steps aside, and the collector keeps them', async () => {
  await foregroundReleasesKeptPolicies(context());
}, 240_000);

it("foreground, kube-controller-manager running throughout, the chart's deletion guard installed: Orphan and Approve objects are refused to the collector until the finalizer has released them, and kept", async () => {
  await foregroundGuardKeepsPolicies(context());
}, 240_000);
