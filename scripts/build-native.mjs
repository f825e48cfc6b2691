/**
 * `npm run build:native`: builds the revm call engine (native/revm-call/, a napi-rs addon; docs/benchmarks.md
 * "revm prototype") with the machine's cargo and puts it at dist/native/ferry_revm_call.node. Without
 * cargo the build goes on and ferry runs every call on ethereumjs (the call pool logs which engine it
 * uses); under CI=true a missing addon fails test/unit/revm-addon.test.ts instead.
 * FERRY_SKIP_NATIVE=1 skips it.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const crate = join(root, 'native', 'revm-call');
const out = join(root, 'dist', 'native', 'ferry_revm_call.node');
const libName = { darwin: 'libferry_revm_call.dylib', win32: 'ferry_revm_call.dll' }[process.platform] ?? 'libferry_revm_call.so';

if (process.env.FERRY_SKIP_NATIVE === '1') {
  console.log('build:native: skipped (FERRY_SKIP_NATIVE=1); eth_call runs on ethereumjs');
  process.exit(0);
}
const probe = spawnSync('cargo', ['--version'], { encoding: 'utf8' });
if (probe.status !== 0) {
  console.log('build:native: no cargo on PATH; the revm call engine is not built and eth_call runs on ethereumjs');
  process.exit(0);
}
const built = spawnSync('cargo', ['build', '--release', '--locked', '--quiet'], { cwd: crate, stdio: 'inherit' });
if (built.status !== 0) {
  console.error('build:native: cargo build failed; the revm call engine is not built');
  process.exit(process.env.CI === 'true' ? 1 : 0);
}
const lib = join(crate, 'target', 'release', libName);
if (!existsSync(lib)) {
  console.error(`build:native: ${lib} is missing after the build`);
  process.exit(1);
}
mkdirSync(dirname(out), { recursive: true });
copyFileSync(lib, out);
