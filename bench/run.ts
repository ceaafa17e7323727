// `npm run bench`: runs every bench script in this folder, each in its own process so one bench's
// heap and JIT state do not colour the next.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const here = new URL('.', import.meta.url);
// `npm run bench -- execute` runs only the benches whose file name contains the word.
const only = process.argv[2];
// Benches are the scripts at the top of this folder; what they share lives in lib/.
const scripts = readdirSync(here).filter(
  (f) => f.endsWith('.ts') && f !== 'run.ts' && (!only || f.includes(only)),
);
let failed = 0;
for (const script of scripts) {
  const result = spawnSync(process.execPath, [new URL(script, here).pathname], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
