// raw_stdout.mjs: the JavaScript reference solution, with writes to fd 1 below console and process.stdout: fs.writeSync(1, ...) at load and in each call, and a child started with stdio 'inherit'.
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
// The test copies the example solution beside this file as reference.mjs: in the box, a
// solution reads only its own folder.
import { DLQConsumer as Reference } from './reference.mjs';

fs.writeSync(1, 'raw write while loading\n');

export class DLQConsumer extends Reference {
  constructor(...args) {
    super(...args);
    spawnSync(process.execPath, ['-e', 'console.log("a child with stdio inherit")'], { stdio: 'inherit' });
  }

  processOne() {
    fs.writeSync(1, 'raw write in processOne\n');
    process.stdout.write('process.stdout.write in processOne\n');
    console.log('console.log in processOne');
    return super.processOne();
  }
}
