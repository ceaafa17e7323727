// Builds the pools' heap guard (runner/native: a Node addon of a few lines, see heap-guard.cc)
// with node-gyp, which comes with npm and needs Python 3, make and a C++ compiler: `npm run build:native`,
// and the postinstall step of `npm install`; then checks that a worker thread loads it. Node's headers are
// taken from the running Node's own installation when it has them, so that the build needs no network;
// else node-gyp fetches them. With --postinstall a failure only warns: the service runs without the guard
// and says so when a runner starts. `--check` only checks (CI).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HEAP_GUARD_PATH, heapGuardLoads } from '../runner/threads/heap-guard.ts';

const NATIVE_DIR = fileURLToPath(new URL('../runner/native/', import.meta.url));

const postinstall = process.argv.includes('--postinstall');
if (process.argv.includes('--check')) {
  // CI: the postinstall build only warns, and the memory-bomb tests that need the guard skip without it.
  if (await heapGuardLoads()) console.log(`Heap guard loads: ${HEAP_GUARD_PATH}`);
  else {
    console.error(`Heap guard does not load in a worker thread of this Node: ${HEAP_GUARD_PATH}`);
    process.exitCode = 1;
  }
} else {
  try {
    const started = performance.now();
    build();
    if (!(await heapGuardLoads())) throw new Error(`${HEAP_GUARD_PATH} was built but does not load`);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`Heap guard built into ${HEAP_GUARD_PATH} in ${seconds} s`);
  } catch (err) {
    console.error(`Heap guard build failed: ${err instanceof Error ? err.message : String(err)}`);
    if (postinstall) {
      console.error(
        '(the service still installs and runs, but one function or document allocating a huge object can ' +
          'abort its runner; `npm run build:native` tries again)',
      );
    } else {
      process.exitCode = 1;
    }
  }
}

function build(): void {
  const nodeGyp = process.env.npm_config_node_gyp;
  const command = nodeGyp ? process.execPath : 'node-gyp';
  const args = [...(nodeGyp ? [nodeGyp] : []), 'rebuild'];
  // node-gyp reads npm's `nodedir` setting from the environment (Debian's npm sets it to /usr: the
  // headers of Debian's own, older Node), so the headers are chosen here and handed over the same way;
  // with none at hand, node-gyp fetches those of this version.
  const env = { ...process.env };
  delete env.npm_config_nodedir;
  const headers = nodeHeaders();
  if (headers) env.npm_config_nodedir = headers;
  const result = spawnSync(command, args, { cwd: NATIVE_DIR, encoding: 'utf8', env });
  if (result.error) throw new Error(`could not run node-gyp: ${result.error.message}`);
  if (result.status !== 0) {
    const output = `${result.stdout}${result.stderr}`.trim().split('\n').slice(-15).join('\n');
    throw new Error(`node-gyp exited with ${result.status}:\n${output}`);
  }
  if (!existsSync(HEAP_GUARD_PATH)) throw new Error(`node-gyp did not write ${HEAP_GUARD_PATH}`);
}

/**
 * An install prefix holding this very Node's headers (include/node): npm's `nodedir` setting when it is
 * one; else the running Node's own installation (the official archives, nvm and Homebrew keep them beside
 * bin/node; npm's `node` package keeps them in its platform package). Only headers of this exact version
 * will do: an addon must match the ABI of the Node that loads it.
 */
function nodeHeaders(): string | null {
  const configured = process.env.npm_config_nodedir;
  const prefix = dirname(dirname(realpathSync(process.execPath)));
  const candidates = [...(configured ? [configured] : []), prefix];
  const platformPackages = join(prefix, 'node_modules');
  if (existsSync(platformPackages)) {
    for (const name of readdirSync(platformPackages)) {
      if (name.startsWith('node-')) candidates.push(join(platformPackages, name));
    }
  }
  return candidates.find(isThisVersion) ?? null;
}

function isThisVersion(prefix: string): boolean {
  const header = join(prefix, 'include', 'node', 'node_version.h');
  if (!existsSync(header) || !existsSync(join(prefix, 'include', 'node', 'common.gypi'))) return false;
  const text = readFileSync(header, 'utf8');
  const part = (name: string) => text.match(new RegExp(`#define NODE_${name}_VERSION (\\d+)`))?.[1];
  return `${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}` === process.versions.node;
}
