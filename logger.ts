// Structured logs: one JSON line per event on stderr through pino, filtered by LOG_LEVEL. stdout is
// kept for the start-up lines a person reads (addresses, the first API key), so the two never mix.
// Callers keep the `(msg, fields)` order; secrets are kept out twice over: fields named like a
// credential are censored by path, and every line is scrubbed of API keys, bearer tokens and the
// secret values this process was configured with.
import { type DestinationStream, pino } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger whose every line carries these fields (a request's id, a job's queue). */
  child(bindings: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  /** Where lines go instead of stderr: tests read them back. */
  destination?: DestinationStream;
  /** Values that must never appear in a line (the admin token, provider keys). */
  secrets?: (string | undefined)[];
}

// Field names that hold credentials wherever callers put them: at the top, one level down, or in
// a headers object. Censored, not removed, so a reader sees that something was there.
const CREDENTIAL_FIELDS = [
  'authorization',
  'cookie',
  '["x-api-key"]',
  '["x-admin-token"]',
  'apiKey',
  'key_ciphertext',
  'token',
  'adminToken',
  'password',
  'secret',
  'secrets',
];
const REDACT_PATHS = CREDENTIAL_FIELDS.flatMap((f) => {
  const dotted = f.startsWith('[') ? f : `.${f}`;
  return [f, `*${dotted}`, `*.headers${dotted}`, `*.*${dotted}`];
});

// Whatever field or message text they hide in: our API keys, and the credential of a bearer header.
const API_KEY = /sk-service-[A-Za-z0-9_-]{8,}/g;
const BEARER = /\b(Bearer)\s+[A-Za-z0-9._~+/=-]+/gi;
// An inbound webhook's URL is its credential: its token is cut from any path a line shows.
const WEBHOOK_TOKEN = /(\/api\/webhooks\/)[^/?#"\s]+/g;

export function createLogger(
  level: LogLevel,
  base: Record<string, unknown> = {},
  options: LoggerOptions = {},
): Logger {
  // JSON-escaped, as a value appears inside a line; short values would censor ordinary words.
  const known = (options.secrets ?? [])
    .filter((s): s is string => typeof s === 'string' && s.length >= 8)
    .map((s) => JSON.stringify(s).slice(1, -1));
  const scrub = (line: string) => {
    let out = line
      .replace(API_KEY, 'sk-service-[REDACTED]')
      .replace(BEARER, '$1 [REDACTED]')
      .replace(WEBHOOK_TOKEN, '$1[REDACTED]');
    for (const secret of known) out = out.replaceAll(secret, '[REDACTED]');
    return out;
  };
  const logger = pino(
    {
      level,
      base,
      timestamp: pino.stdTimeFunctions.isoTime,
      // Level names, not pino's numbers: readable, and what the lines said before pino.
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeError },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      hooks: { streamWrite: scrub },
    },
    // Asynchronous writes keep logging off the request path; pino flushes what is pending on exit.
    options.destination ?? pino.destination({ dest: 2, sync: false }),
  );
  return adapt(logger);
}

function adapt(logger: pino.Logger): Logger {
  return {
    debug: (msg, fields) => (fields ? logger.debug(fields, msg) : logger.debug(msg)),
    info: (msg, fields) => (fields ? logger.info(fields, msg) : logger.info(msg)),
    warn: (msg, fields) => (fields ? logger.warn(fields, msg) : logger.warn(msg)),
    error: (msg, fields) => (fields ? logger.error(fields, msg) : logger.error(msg)),
    child: (bindings) => lazyChild(logger, bindings),
  };
}

// A pino child is made when it first writes a line: making one runs the redaction over its bindings,
// and most children (one per request) never write one at the level configured.
function lazyChild(parent: pino.Logger, bindings: Record<string, unknown>): Logger {
  let made: Logger | undefined;
  const child = () => {
    made ??= adapt(parent.child(bindings));
    return made;
  };
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') => (msg: string, fields?: Record<string, unknown>) => {
      if (parent.isLevelEnabled(level)) child()[level](msg, fields);
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => lazyChild(parent, { ...bindings, ...more }),
  };
}

// The message, code and stack only: a driver's error may carry the statement's parameters, which
// can be anything a client sent.
function serializeError(err: unknown) {
  if (!(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  return {
    type: err.name,
    message: err.message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    stack: err.stack,
  };
}

/** The configured values a process's log lines must never show (API keys are caught by their form). */
export function configuredSecrets(config: {
  ADMIN_TOKEN?: string | undefined;
  OPENAI_API_KEY?: string | undefined;
  S3_SECRET_ACCESS_KEY?: string | undefined;
}): (string | undefined)[] {
  return [config.ADMIN_TOKEN, config.OPENAI_API_KEY, config.S3_SECRET_ACCESS_KEY];
}
