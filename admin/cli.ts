// The admin CLI: `npm run admin -- <router.procedure> '<json input>'` calls the admin plane through
// the typed tRPC client and prints the answer as JSON. `npm run admin -- help [procedure]` lists the
// procedures, or the input one takes; `npm run admin -- deploy <file.json|yaml> <workspaceId> [name]`
// deploys a workflow file. A missing token, a refused one or nothing listening is one line saying
// what to set, not a stack.
import { TRPCClientError } from '@trpc/client';
import { z } from 'zod';
import { parseJson } from '../json-errors.ts';
import '../zod-messages.ts';
import { deployFile, UsageError } from './cli-deploy.ts';
import { listing, procedureHelp, procedures, USAGE } from './cli-help.ts';
import { type AdminClient, createAdminClient } from './client.ts';

const cliEnv = z.object({
  ADMIN_URL: z.url().optional(),
  ADMIN_PORT: z.coerce.number().int().min(1).max(65535).default(3001),
  ADMIN_TOKEN: z.string().optional(),
});

const TOKEN_HINT =
  'the admin token the service was started with, or the one its first start printed (lost? docs/admin.md says how to set a new one)';

const ADDRESS_HINT =
  'set ADMIN_PORT (or ADMIN_URL) to where the admin plane listens: the "Admin plane:" line npm start prints';

/** The low-level reason of a failed connection (ECONNREFUSED, ENOTFOUND, …), when there is one. */
function networkReason(e: unknown): string {
  for (let cause = e; cause instanceof Error; cause = cause.cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    if (cause instanceof AggregateError) {
      const inner = (cause.errors[0] as { code?: unknown } | undefined)?.code;
      if (typeof inner === 'string') return inner;
    }
  }
  return (e as Error).message;
}

/**
 * `--scopes a,b` (or `--scopes=a,b`), taken out of the arguments: the scopes of `keys.create`, so a
 * limited key needs no JSON array typed by hand. The admin plane validates each name.
 */
function takeScopes(args: string[]): { rest: string[]; scopes?: string[] } | { error: string } {
  const at = args.findIndex((a) => a === '--scopes' || a.startsWith('--scopes='));
  if (at < 0) return { rest: args };
  const arg = args[at] as string;
  const value = arg === '--scopes' ? args[at + 1] : arg.slice('--scopes='.length);
  if (!value || value.startsWith('--'))
    return { error: '--scopes needs a list: --scopes workflows:execute,logs:read' };
  const rest = args.filter((_, i) => i !== at && !(arg === '--scopes' && i === at + 1));
  return {
    rest,
    scopes: value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  };
}

export async function runCli(allArgs: string[], out = console.log, err = console.error): Promise<number> {
  const taken = takeScopes(allArgs);
  if ('error' in taken) {
    err(taken.error);
    return 2;
  }
  const args = taken.rest;
  const [path, json] = args;
  if (taken.scopes && path !== 'keys.create') {
    err('--scopes goes with keys.create only');
    return 2;
  }
  const all = procedures();
  if (!path || path === 'help' || path === '--help') {
    const topic = args[1];
    if (path && topic) {
      const p = all.get(topic);
      if (!p) {
        err(`Unknown procedure "${topic}". Run: npm run admin -- help`);
        return 2;
      }
      out(procedureHelp(topic, p));
      return 0;
    }
    (path ? out : err)(listing(all));
    return path ? 0 : 2;
  }
  let call: (client: AdminClient) => Promise<unknown>;
  if (path === 'deploy') {
    const [, file, workspaceId, name] = args;
    if (!file || !workspaceId) {
      err(USAGE);
      return 2;
    }
    call = (client) => deployFile(client, file, workspaceId, name);
  } else {
    const type = all.get(path)?.type;
    if (!type) {
      err(`Unknown procedure "${path}". Run: npm run admin -- help`);
      return 2;
    }
    let input: unknown;
    try {
      input = json === undefined ? undefined : parseJson(json);
    } catch (e) {
      err(`The input ${json} is not valid JSON: ${(e as Error).message}`);
      return 2;
    }
    if (taken.scopes) input = { ...(input as object), scopes: taken.scopes };
    call = (client) => {
      // The proxy client resolves `a.b` to the procedure; the router's own definition says which verb.
      const target = path
        .split('.')
        .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], client) as {
        query(input: unknown): Promise<unknown>;
        mutate(input: unknown): Promise<unknown>;
      };
      return type === 'query' ? target.query(input) : target.mutate(input);
    };
  }
  const env = cliEnv.safeParse(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v)));
  if (!env.success) {
    const issue = env.error.issues[0];
    err(`Invalid configuration: ${String(issue?.path[0])} ${issue?.message}`);
    return 2;
  }
  const url = env.data.ADMIN_URL ?? `http://127.0.0.1:${env.data.ADMIN_PORT}/trpc`;
  if (!env.data.ADMIN_TOKEN) {
    err(`ADMIN_TOKEN is not set: set it to ${TOKEN_HINT}`);
    return 2;
  }
  try {
    out(JSON.stringify(await call(createAdminClient({ url, token: env.data.ADMIN_TOKEN })), null, 2));
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      err(e.message);
      return 2;
    }
    if (!(e instanceof TRPCClientError)) throw e;
    // An answer of the admin plane carries data (its code and status).
    const data = e.data as { code?: string; httpStatus?: number; details?: unknown } | undefined;
    if (data?.code === 'UNAUTHORIZED') {
      err(`The admin plane at ${url} refused ADMIN_TOKEN: set it to ${TOKEN_HINT}`);
      return 1;
    }
    if (data) {
      err(
        JSON.stringify(
          { error: e.message, code: data.code, status: data.httpStatus, details: data.details },
          null,
          2,
        ),
      );
      return 1;
    }
    // Something answered, but not in tRPC's shape: another server on that port (the API's, say).
    const status = (e.meta?.response as Response | undefined)?.status;
    if (status !== undefined || e.cause instanceof SyntaxError) {
      err(
        `Something answered at ${url}${status ? ` (HTTP ${status})` : ''}, but not the admin plane: ${ADDRESS_HINT}`,
      );
      return 1;
    }
    err(
      `Could not reach the admin plane at ${url} (${networkReason(e)}): is the service running? Or ${ADDRESS_HINT}`,
    );
    return 1;
  }
}
