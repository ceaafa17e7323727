// `npm run bench`: runs every bench script in this folder, each in its own process so one bench's
// heap and JIT state do not colour the next.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const here = new URL('.', import.meta.url);
const only = process.argv[2];
const scripts = readdirSync(here).filter(
  (f) =>
    f.endsWith('.ts') && !['run.ts', 'measure.ts', 'table.ts'].includes(f) && (!only || f.includes(only)),
);
let failed = 0;
for (const script of scripts) {
  const result = spawnSync(process.execPath, [new URL(script, here).pathname], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
