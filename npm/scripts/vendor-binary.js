// vendor-binary.js: `npm pack`'s prepack step; copies the release binary `cargo build --release` made into vendor/PLATFORM-ARCH/.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const target = process.env.CARGO_TARGET_DIR ? path.resolve(root, process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
const exe = process.platform === 'win32' ? 'dlqspec.exe' : 'dlqspec';
const built = path.join(target, 'release', exe);
if (!fs.statSync(built, { throwIfNoEntry: false })?.isFile()) {
  console.error(`vendor-binary: no ${built}: run \`cargo build --release\` at the repository root first`);
  process.exit(1);
}
const vendor = path.join(__dirname, '..', 'vendor');
fs.rmSync(vendor, { recursive: true, force: true });
const dir = path.join(vendor, `${process.platform}-${process.arch}`);
fs.mkdirSync(dir, { recursive: true });
fs.copyFileSync(built, path.join(dir, exe));
fs.chmodSync(path.join(dir, exe), 0o755);
console.error(`vendor-binary: packed ${built} for ${process.platform}-${process.arch}`);
