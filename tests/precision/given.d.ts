export * from '../../src/contracts/dlq_consumer/given';
