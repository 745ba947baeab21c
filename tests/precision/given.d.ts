export * from '../../shims/node/given';
