// A server the bench runs as a process of its own (the service's API, or a bare baseline), so its
// memory can be watched from outside: started, sampled, sent large bodies with backpressure, stopped.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';

/** Starts a server process and resolves with its pid and the URL it prints. */
export async function startServer(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d;
      const m = out.match(/listening on (http:\/\/\S+)/i);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
  return {
    pid: child.pid as number,
    url,
    async stop() {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The service's API as a process of its own, on a scratch service's database and data folder. */
export function startApiProcess(config: {
  DATABASE_URL?: string | undefined;
  ENCRYPTION_KEY?: unknown;
  DATA_DIR: string;
}) {
  return startServer([new URL('../../api/main.ts', import.meta.url).pathname], {
    ...process.env,
    DATABASE_URL: config.DATABASE_URL,
    ENCRYPTION_KEY: (config.ENCRYPTION_KEY as Buffer).toString('hex'),
    DATA_DIR: config.DATA_DIR,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'error',
    STORAGE_DRIVER: 'local',
  });
}

const rssKb = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))?.[1] ?? 0);

/**
 * Runs `work` while watching a process's resident memory: answers the time taken and the peak
 * RSS growth in MB. The kernel's own high-water mark is reset first (clear_refs 5) where allowed,
 * so a peak between two samples is not missed; sampling every 5 ms backs it up.
 */
export async function watched<T>(pid: number, work: () => Promise<T>) {
  let resetPeak = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    resetPeak = false;
  }
  const before = rssKb(pid, 'VmRSS');
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssKb(pid, 'VmRSS'));
  }, 5);
  const started = performance.now();
  const result = await work();
  const seconds = (performance.now() - started) / 1000;
  clearInterval(timer);
  if (resetPeak) peak = Math.max(peak, rssKb(pid, 'VmHWM'));
  peak = Math.max(peak, rssKb(pid, 'VmRSS'));
  return { seconds, rssGrowthMb: (peak - before) / 1024, result };
}

/** POSTs a body of known length over one HTTP connection, honouring backpressure; answers the status and text. */
export async function post(
  url: string,
  headers: Record<string, string>,
  pieces: Iterable<Buffer>,
  length: number,
) {
  // A connection of its own: a kept-alive one may have been closed by the server, idle past its
  // keep-alive timeout while this process was busy building the body (a 100 MB CSV takes seconds),
  // and writing to it before the close is read fails with EPIPE.
  const req = http.request(url, {
    agent: false,
    method: 'POST',
    headers: { ...headers, 'Content-Length': String(length) },
  });
  const response = once(req, 'response') as Promise<[http.IncomingMessage]>;
  for (const piece of pieces) if (!req.write(piece)) await once(req, 'drain');
  req.end();
  const [res] = await response;
  let text = '';
  for await (const chunk of res) text += chunk;
  return { status: res.statusCode ?? 0, text };
}
