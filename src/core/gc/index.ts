export * from './graph.js';
export * from './builder.js';
export * from './classify.js';
export * from './decide.js';
export * from './scope.js';
export * from './lru.js';
export * from './sync-gate.js';
