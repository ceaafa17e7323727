// The authenticated request path on the embedded database: key lookup (SHA-256 + indexed read),
// workspace access checks, and an audit-log page, against an unauthenticated baseline (/health).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApi } from '../api/start.ts';
import { loadConfig } from '../config.ts';
import { bootstrap } from '../db/bootstrap.ts';
import { openPglite } from '../db/client.ts';
import { migrate } from '../db/migrate.ts';
import { setOrganizationPlan } from '../db/organizations.ts';
import { createLogger } from '../logger.ts';
import { measure } from './lib/measure.ts';
import { printTable } from './lib/table.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'wfs-bench-'));
const db = await openPglite();
await migrate(db);
const encryptionKey = randomBytes(32);
const { apiKey, workspaceId } = await bootstrap(db, { encryptionKey, adminToken: 'bench-admin-token-0000' });
const [org] = await db.query<{ id: string }>('select id from organizations');
await setOrganizationPlan(db, (org as { id: string }).id, 'enterprise');
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
const api = await startApi({ db, config, log: createLogger('silent') });
const app = api.app;
const headers = { 'X-API-Key': apiKey as string, 'Content-Type': 'application/json' };

const baseline = await measure('GET /health', () => app.request('/health'));
const rejected = await measure('401 (unknown key)', () =>
  app.request('/api/v1/audit-logs', { headers: { 'X-API-Key': `sk-service-${'x'.repeat(32)}` } }),
);
const auditPage = await measure('GET /api/v1/audit-logs (limit 50)', () =>
  app.request(`/api/v1/audit-logs?workspaceId=${workspaceId}`, { headers }),
);
let n = 0;
const createWs = await measure(
  'POST /api/v1/workspaces',
  () =>
    app.request('/api/v1/workspaces', {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: `Bench ${n++}` }),
    }),
  200,
);
printTable(
  'Authenticated API path (embedded PGlite, in-process app.request)',
  [rejected, auditPage, createWs].map((m) => ({
    measure: `${m.name} (req/s)`,
    ours: m.opsPerSec,
    baselineName: baseline.name,
    baseline: baseline.opsPerSec,
    higherIsBetter: true,
  })),
);
await api.close();
await db.close();
rmSync(dataDir, { recursive: true, force: true });
