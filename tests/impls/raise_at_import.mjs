// raise_at_import.mjs: a student solution that throws while being imported (line 6); the Node shim must answer hello with errored, file and line 6.
import { PermanentError } from 'given';

const config = {};

const LIMIT = config.retry.maxAttempts;

export class RetryQueue {}
