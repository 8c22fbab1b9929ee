/** What every controller is built from: one client, discovery, clock, logger and event recorder. */
import type { KubeClient } from '../kube/client.js';
import type { Discovery } from '../kube/discovery.js';
import type { Logger } from '../observability/logger.js';
import type { OperatorMetrics } from '../observability/metrics.js';
import type { Clock, ServerTime } from '../kube/clock.js';
import type { EventRecorder } from './events.js';
import type { ReleaseRecords } from './softdelete/release-records.js';

export interface ControllerDeps {
  client: KubeClient;
  discovery: Discovery;
  clock: Clock;
  logger: Logger;
  events: EventRecorder;
  metrics?: OperatorMetrics;
  /** The API server's clock for soft-delete stamps and expiry; defaults to the client's (Date headers). */
  serverTime?: ServerTime;
  /** Only this namespace (undefined: all). */
  namespace?: string;
  /**
   * The key releases are signed with and checked against (the Secret that
   * --release-key-secret names; controllers/softdelete/release-key.ts).
   */
  releaseKey: Uint8Array;
  /** The record of each release's latest signing, kept beside that key (softdelete/release-records.ts). */
  releaseRecords: ReleaseRecords;
}
