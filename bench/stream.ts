// Streaming executions over real HTTP, the runner in its own process: how much later than the model
// server sends its first token the client reads it (runner → execution_events → NOTIFY → API → SSE),
// and how many events per second one stream carries (an agent answering 2,000 words).
// BENCH_DATABASE_URL names the server (default: the local one); a scratch database is made and dropped.
import { startApi } from '../api/start.ts';
import { listen } from '../http/serve.ts';
import { startBoss } from '../jobs/boss.ts';
import { createLogger } from '../logger.ts';
import { startChatServer } from '../test/helpers/openai-server.ts';
import { spawnRunner } from './lib/processes.ts';
import { startScratchService } from './lib/scratch-service.ts';
import { printTable, type Row } from './lib/table.ts';
import { deployBenchWorkflow } from './lib/workflows.ts';

const SAMPLES = Number(process.env.BENCH_STREAM_SAMPLES ?? 30);
const WORDS = Number(process.env.BENCH_STREAM_WORDS ?? 2_000);

const chat = await startChatServer();
process.env.OPENAI_BASE_URL = chat.url;
process.env.OPENAI_API_KEY = 'sk-bench';
const svc = await startScratchService({ OPENAI_BASE_URL: chat.url, OPENAI_API_KEY: 'sk-bench' });
const { db, config } = svc;
const log = createLogger(config.LOG_LEVEL);
const rows: Row[] = [];
/** Per stream: the client's first token minus the model server's first chunk, in ms. */
const lags: number[] = [];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)] as number;

try {
  const workflowId = await deployBenchWorkflow(svc, {
    inputs: { text: { type: 'string', required: true } },
    blocks: [{ id: 'agent', type: 'agent', model: 'gpt-4o-mini', prompt: '<start.text>' }],
    edges: [],
  });
  const sender = await startBoss(db, { log, supervise: false });
  const api = await startApi({ db, config, log, queue: sender });
  const server = await listen(api.app, 0, '127.0.0.1');
  const runner = await spawnRunner(config);
  const url = `${server.url}/api/workflows/${workflowId}/execute`;
  const headers = { 'X-API-Key': svc.apiKey, 'Content-Type': 'application/json' };

  /** One streamed execution: when its first token reached the client, and how many events came. */
  async function streamOnce(text: string) {
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ inputs: { text }, stream: true }),
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let firstTokenAt = 0;
    let events = 0;
    let seen = '';
    const started = performance.now();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += decoder.decode(value, { stream: true });
      if (!firstTokenAt && seen.includes('event: token')) firstTokenAt = performance.now();
      const blocks = seen.split('\n\n');
      seen = blocks.pop() ?? '';
      events += blocks.filter((b) => b.startsWith('id:')).length;
    }
    return { firstTokenAt, events, ms: performance.now() - started };
  }

  // Warm-up: the runner's first agent call loads @langchain/openai.
  for (let i = 0; i < 3; i++) await streamOnce('warm up');
  const atClient: number[] = [];
  const atModel: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const before = chat.firstChunkAt.length;
    const t0 = performance.now();
    const { firstTokenAt } = await streamOnce(`hello there ${i}`);
    const sentAt = chat.firstChunkAt[before] as number;
    lags.push(firstTokenAt - sentAt);
    atClient.push(firstTokenAt - t0);
    atModel.push(sentAt - t0);
  }
  rows.push({
    measure: `first token, ms after the request (median of ${SAMPLES})`,
    ours: median(atClient),
    baselineName: 'model server sends it',
    baseline: median(atModel),
    higherIsBetter: false,
  });

  const text = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ');
  const rates: number[] = [];
  for (let i = 0; i < 3; i++) {
    const { events, ms } = await streamOnce(text);
    rates.push((events / ms) * 1000);
  }
  // Baseline: the model server's own stream of the same answer, read straight from it.
  const direct: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const res = await fetch(`${chat.url}/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: text }],
      }),
    });
    const body = await res.text();
    direct.push((body.split('\n\n').length / (performance.now() - t0)) * 1000);
  }
  rows.push({
    measure: `events/s through one stream (${WORDS + 1} tokens, median of 3)`,
    ours: median(rates),
    baselineName: 'model server chunks/s, read directly',
    baseline: median(direct),
    higherIsBetter: true,
  });
  await runner.stop();
  await server.close();
  await api.close();
  await sender.stop({ graceful: false });
} finally {
  await svc.dispose();
  await chat.close();
}
printTable('Streaming executions', rows);
console.log(
  `\nfirst token at the client minus first token sent by the model server: median ${median(lags).toFixed(1)} ms, ` +
    `p95 ${p95(lags).toFixed(1)} ms over ${SAMPLES} streams (target ≤ 20 ms)`,
);
