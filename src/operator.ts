/**
 * The operator's parts wired together: Bundle controller, released-object
 * sweeper and (unless --gc=off) the garbage collector, on one client and one
 * clock. main.ts adds flags, signals, leader election and HTTP endpoints;
 * integration tests build an Operator directly with a fake clock.
 */
import type { HealthCheck } from './api/health-checks.js';
import type { KubeClient } from './kube/client.js';
import { Discovery } from './kube/discovery.js';
import type { Logger } from './observability/logger.js';
import type { OperatorMetrics } from './observability/metrics.js';
import type { Cancel, Clock, ServerTime } from './kube/clock.js';
import { BundleController } from './controllers/bundle/controller.js';
import { ReleasedObjectSweeper } from './controllers/softdelete/released-sweeper.js';
import type { ReleaseKeySecret } from './controllers/softdelete/release-key.js';
import { ReleaseRecords } from './controllers/softdelete/release-records.js';
import { apiEventRecorder, type EventRecorder } from './controllers/events.js';
import type { LabelSelector } from './core/selector.js';

/** What a garbage collector must offer the operator (src/controllers/gc implements it). */
export interface GarbageCollectorPart {
  start(): Promise<void>;
  stop(): Promise<void>;
  hasSynced(): boolean;
}

/** How often held release record writes are tried again (a cancel held in one shard is unknown to the sweeping one meanwhile). */
const HELD_WRITES_EVERY_MS = 3_000;

export interface OperatorOptions {
  client: KubeClient;
  /** The released-object sweeper's client (process-clients.ts backgroundClient); `client` when not given. */
  backgroundClient?: KubeClient;
  clock: Clock;
  logger: Logger;
  metrics?: OperatorMetrics;
  namespace?: string;
  workers?: number;
  /** Built by the caller (so tests can choose), started and stopped here. */
  garbageCollector?: GarbageCollectorPart;
  instance?: string;
  events?: EventRecorder;
  /** The API server's clock for soft deletes; defaults to the client's (Date headers). Tests crossing long delays inject one. */
  serverTime?: ServerTime;
  /** See BundleControllerOptions.watchSyncTimeoutMs. */
  watchSyncTimeoutMs?: number;
  /** Lockdown (--default-service-account): see BundleControllerOptions.defaultServiceAccount. */
  defaultServiceAccount?: string;
  /** --health-checks-file: see BundleControllerOptions.healthCheckDefaults. */
  healthCheckDefaults?: readonly HealthCheck[];
  /** The key releases are signed with (controllers/softdelete/release-key.ts loads it). */
  releaseKey: Uint8Array;
  /** Where the key lives (the records of releases are kept beside it). */
  releaseKeySecret: ReleaseKeySecret;
  /** Sharding (--bundle-selector): see BundleControllerOptions.bundleSelector. */
  bundleSelector?: LabelSelector;
  /** Whether this process runs the released-object sweeper (--sweep-released; default true). */
  sweepReleased?: boolean;
}

export class Operator {
  readonly discovery: Discovery;
  readonly bundles: BundleController;
  /** Undefined when another process sweeps (--sweep-released=false). */
  readonly sweeper: ReleasedObjectSweeper | undefined;
  private started = false;
  private readonly releaseRecords: ReleaseRecords;
  private heldWrites: Cancel | undefined;

  constructor(private readonly o: OperatorOptions) {
    this.discovery = new Discovery(o.client);
    this.releaseRecords = new ReleaseRecords(o.client, o.releaseKeySecret);
    const events = o.events ?? apiEventRecorder(o.client, o.clock, o.logger, o.instance ?? 'bundlesmith');
    const common = {
      client: o.client,
      discovery: this.discovery,
      releaseKey: o.releaseKey,
      releaseRecords: this.releaseRecords,
      clock: o.clock,
      events,
      ...(o.metrics ? { metrics: o.metrics } : {}),
      ...(o.namespace ? { namespace: o.namespace } : {}),
      ...(o.serverTime ? { serverTime: o.serverTime } : {}),
      ...(o.defaultServiceAccount ? { defaultServiceAccount: o.defaultServiceAccount } : {}),
    };
    this.bundles = new BundleController({
      ...common,
      logger: o.logger.child({ controller: 'bundle' }),
      ...(o.workers ? { workers: o.workers } : {}),
      ...(o.watchSyncTimeoutMs ? { watchSyncTimeoutMs: o.watchSyncTimeoutMs } : {}),
      ...(o.bundleSelector ? { bundleSelector: o.bundleSelector } : {}),
      ...(o.healthCheckDefaults ? { healthCheckDefaults: o.healthCheckDefaults } : {}),
    });
    this.sweeper =
      o.sweepReleased === false
        ? undefined
        : new ReleasedObjectSweeper({
            ...common,
            client: o.backgroundClient ?? o.client,
            logger: o.logger.child({ controller: 'released-sweeper' }),
          });
  }

  async start(): Promise<void> {
    await this.discovery.refresh();
    await Promise.all([this.bundles.start(), this.sweeper?.start(), this.o.garbageCollector?.start()]);
    this.started = true;
    this.scheduleHeldWrites();
  }

  /** Every few seconds, the release record writes this process holds (ReleaseRecords.writeHeld): in every shard, sweeping or not. */
  private scheduleHeldWrites(): void {
    this.heldWrites = this.o.clock.setTimeout(() => {
      void this.releaseRecords.writeHeld(this.o.logger).finally(() => {
        if (this.started) this.scheduleHeldWrites();
      });
    }, HELD_WRITES_EVERY_MS);
  }

  /** Stop taking work, finish in-flight items, stop watches. */
  async stop(): Promise<void> {
    this.started = false;
    this.heldWrites?.();
    this.heldWrites = undefined;
    await Promise.all([this.bundles.stop(), this.sweeper?.stop(), this.o.garbageCollector?.stop()]);
  }

  ready(): boolean {
    return (
      this.started && this.bundles.hasSynced() && (this.sweeper?.hasSynced() ?? true) && (this.o.garbageCollector?.hasSynced() ?? true)
    );
  }
}
