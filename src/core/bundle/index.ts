/** Pure decisions for a Bundle: validate, order, resolve references, plan, readiness, status. */
export * from './conditions.js';
export * from './desired.js';
export * from './finalize.js';
export * from './graph.js';
export * from './hash.js';
export * from './kinds.js';
export * from './next-pass.js';
export * from './objects.js';
export * from './path.js';
export * from './pending.js';
export * from './plan-input.js';
export * from './plan.js';
export * from './prune.js';
export * from './readiness.js';
export * from './references.js';
export * from './status.js';
export * from './validate.js';
