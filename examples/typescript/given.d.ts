// given.d.ts: lets tsc and editors type-check solution.ts; at run time dlqspec's shim supplies the real `given`.
export * from '../../src/contracts/dlq_consumer/given.js';
