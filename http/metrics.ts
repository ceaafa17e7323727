// Prometheus metrics: a registry per process (tests build several apps side by side), Node's
// default process metrics, gauges of the service's backlog read from the database at scrape time,
// and `GET /metrics` behind the admin token. The API records its request latencies into the same
// registry when it shares the process (api/middleware/http-metrics.ts).
import { Hono } from 'hono';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Config } from '../config.ts';
import {
  executionsFinishedSince,
  executionsInFlight,
  ingestionBacklog,
  type QueueBacklog,
  queueBacklog,
} from '../db/backlog.ts';
import { verifyAdminToken } from '../db/bootstrap.ts';
import type { Db } from '../db/client.ts';
import { QUEUES } from '../jobs/queues.ts';
import type { Logger } from '../logger.ts';
import { type Listening, listenOrExit } from './serve.ts';

/** A registry with Node's process metrics (CPU, memory, event loop lag, GC). */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

// Scrapes must answer within Prometheus's timeout (10 s by default) even when the database does not.
const READ_TIMEOUT_MS = 5000;
const FINISHED_WINDOW_SECONDS = 3600;
const QUEUE_STATES = ['created', 'retry', 'active'];

interface Backlog {
  queues: QueueBacklog[];
  inFlight: Map<string, number>;
  finished: Map<string, number>;
  ingestion: Map<string, number>;
}

/** Registers the backlog gauges on the registry (once: a second call on it is a no-op). */
export function registerBacklogGauges(registry: Registry, db: Db, log: Logger) {
  if (registry.getSingleMetric('wfs_backlog_up')) return;
  // prom-client collects every gauge of a scrape at once: they share one read of the database.
  let reading: Promise<Backlog | null> | null = null;
  const read = () => {
    reading ??= readBacklog(db)
      .catch((err) => {
        log.warn('metrics: reading the backlog failed', { err });
        return null;
      })
      .finally(() => {
        reading = null;
      });
    return reading;
  };

  new Gauge({
    name: 'wfs_backlog_up',
    help: 'Whether the backlog gauges could be read from the database at this scrape (1) or not (0)',
    registers: [registry],
    async collect() {
      this.set((await read()) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'wfs_queue_jobs',
    help: 'Jobs in a pg-boss queue by state: created (waiting), retry (waiting to be retried), active',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      const backlog = await read();
      this.reset();
      if (!backlog) return;
      // Every queue and state is reported, at 0 too: a series that vanishes cannot be alerted on.
      for (const queue of Object.values(QUEUES))
        for (const state of QUEUE_STATES) this.set({ queue, state }, 0);
      for (const q of backlog.queues) this.set({ queue: q.queue, state: q.state }, q.jobs);
    },
  });
  new Gauge({
    name: 'wfs_queue_oldest_waiting_seconds',
    help: 'Age of the oldest job waiting in a pg-boss queue (state created or retry), 0 when none waits',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      const backlog = await read();
      this.reset();
      if (!backlog) return;
      for (const queue of Object.values(QUEUES)) {
        const waiting = backlog.queues.filter((q) => q.queue === queue && q.state !== 'active');
        this.set({ queue }, Math.max(0, ...waiting.map((q) => q.oldestSeconds)));
      }
    },
  });
  // Counts by status, each read from the scrape's one backlog read.
  const byStatus = (
    name: string,
    help: string,
    statuses: string[],
    pick: (b: Backlog) => Map<string, number>,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['status'],
      registers: [registry],
      async collect() {
        const backlog = await read();
        this.reset();
        if (!backlog) return;
        for (const status of statuses) this.set({ status }, pick(backlog).get(status) ?? 0);
      },
    });
  byStatus(
    'wfs_executions',
    'Workflow executions now queued, processing or paused (waiting for an approval)',
    ['queued', 'processing', 'paused'],
    (b) => b.inFlight,
  );
  byStatus(
    'wfs_executions_finished_last_hour',
    'Workflow executions that ended in the last hour, by final status',
    ['completed', 'failed'],
    (b) => b.finished,
  );
  byStatus(
    'wfs_knowledge_documents_backlog',
    'Knowledge documents still to ingest, by processing status (pending or processing)',
    ['pending', 'processing'],
    (b) => b.ingestion,
  );
}

async function readBacklog(db: Db): Promise<Backlog> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${READ_TIMEOUT_MS} ms`)), READ_TIMEOUT_MS);
  });
  try {
    const [queues, inFlight, finished, ingestion] = await Promise.race([
      Promise.all([
        queueBacklog(db),
        executionsInFlight(db),
        executionsFinishedSince(db, FINISHED_WINDOW_SECONDS),
        ingestionBacklog(db),
      ]),
      deadline,
    ]);
    return { queues, inFlight, finished, ingestion };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `GET /metrics` in the Prometheus text format, for `Authorization: Bearer <ADMIN_TOKEN>` only: the
 * figures describe every tenant's traffic. `registry` is a function so a process that never gets
 * scraped never starts the default collectors.
 */
export function metricsRoutes(deps: { db: Db; config: Config; registry: () => Registry }) {
  const app = new Hono();
  app.get('/metrics', async (c) => {
    const header = c.req.header('authorization') ?? '';
    const token = /^bearer /i.test(header) ? header.slice(7).trim() : '';
    let allowed = false;
    try {
      allowed = !!token && (await verifyAdminToken(deps.db, deps.config.ADMIN_TOKEN, token));
    } catch {
      // Without ADMIN_TOKEN the token's hash is in the database, which is not answering.
      return c.json({ error: 'Cannot verify the admin token: the database is unavailable' }, 503);
    }
    if (!allowed) {
      c.header('WWW-Authenticate', 'Bearer');
      return c.json(
        { error: 'Missing or invalid admin token: send Authorization: Bearer <ADMIN_TOKEN>' },
        401,
      );
    }
    const registry = deps.registry();
    return c.body(await registry.metrics(), 200, { 'Content-Type': registry.contentType });
  });
  return app;
}

/** A server of its own for /metrics: the API process alone exposes its latencies on METRICS_PORT. */
export function createMetricsApp(deps: { db: Db; config: Config; registry: Registry }) {
  const app = new Hono();
  app.route('/', metricsRoutes({ ...deps, registry: () => deps.registry }));
  app.notFound((c) => c.json({ error: `No route for ${c.req.method} ${c.req.path}` }, 404));
  return app;
}

/** For an entry point: /metrics on METRICS_PORT when it is set (else null); a port it cannot have exits. */
export async function listenMetrics(deps: {
  db: Db;
  config: Config;
  registry: Registry;
}): Promise<Listening | null> {
  const { config } = deps;
  if (config.METRICS_PORT === undefined) return null;
  return listenOrExit(createMetricsApp(deps), config.METRICS_PORT, config.METRICS_HOST, {
    port: 'METRICS_PORT',
    host: 'METRICS_HOST',
  });
}
