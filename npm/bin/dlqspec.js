#!/usr/bin/env node
// dlqspec.js: the `dlqspec` command of the npm package; runs the native dlqspec binary the package carries.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

// The binary for this platform: the one `npm pack` put in vendor/ (a package built for one
// platform), else the per-platform package npm installed as an optional dependency
// (@dlqspec/linux-x64, ..., the way esbuild ships).
const platform = `${process.platform}-${process.arch}`;
const exe = process.platform === 'win32' ? 'dlqspec.exe' : 'dlqspec';

function findBinary() {
  const vendored = path.join(__dirname, '..', 'vendor', platform, exe);
  if (fs.existsSync(vendored)) return vendored;
  try {
    return require.resolve(`@dlqspec/${platform}/bin/${exe}`);
  } catch {
    return null;
  }
}

const binary = findBinary();
if (binary === null) {
  process.stderr.write(
    `dlqspec: this package has no dlqspec binary for ${platform}; install dlqspec with ` +
      '`cargo install --git <repository> --locked` (or build one and `npm pack` the npm/ folder on this platform)\n',
  );
  process.exit(2);
}

const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit' });
// Ctrl-C reaches the whole foreground group, the binary included, so this process only waits
// for the binary to stop; a SIGTERM or SIGHUP sent to this process alone (a CI runner's) is
// passed on, so the binary can end its own children.
process.on('SIGINT', () => {});
for (const signal of ['SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on('error', (error) => {
  process.stderr.write(`dlqspec: cannot run ${binary}: ${error.message}\n`);
  process.exit(2);
});
child.on('exit', (code, signal) => {
  if (signal !== null) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
  process.exit(code ?? 1);
});
