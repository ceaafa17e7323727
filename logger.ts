// One-line JSON logs on stderr, filtered by LOG_LEVEL. Secrets never reach it: callers pass ids.
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 } as const;
export type LogLevel = keyof typeof LEVELS;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: LogLevel, base: Record<string, unknown> = {}): Logger {
  const write =
    (at: Exclude<LogLevel, 'silent'>) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (LEVELS[at] < LEVELS[level]) return;
      const err = fields.err instanceof Error ? { err: fields.err.message, stack: fields.err.stack } : {};
      process.stderr.write(
        `${JSON.stringify({ time: new Date().toISOString(), level: at, msg, ...base, ...fields, ...err })}\n`,
      );
    };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
