export { GarbageCollector, collectableResources, type GarbageCollectorOptions } from './collector.js';
export { GcEngine, REPORTING_CONTROLLER, isStaleWrite, removeRefsPatch, unblockRefsPatch, type GcApi, type GcEngineOptions, type GcLog, type GcScopeRestriction } from './engine.js';
export { OwnerVerifier, type OwnerLookupApi, type ResourceResolver } from './owner-verifier.js';
export { noopGcMetrics, type GcMetrics, type GcOperation, type GcQueueName } from './metrics.js';
