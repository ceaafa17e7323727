// The admin CLI: `npm run admin -- <router.procedure> '<json input>'` calls the admin plane through
// the typed tRPC client and prints the answer as JSON. `npm run admin -- help` lists the procedures;
// `npm run admin -- deploy <file.json|yaml> <workspaceId> [name]` deploys a workflow file.
import { TRPCClientError } from '@trpc/client';
import { z } from 'zod';
import { parseJson } from '../json-errors.ts';
import '../zod-messages.ts';
import { deployFile, UsageError } from './cli-deploy.ts';
import { type AdminClient, createAdminClient } from './client.ts';
import { adminRouter } from './router.ts';

const TOKEN_REQUIRED = 'is required: the token printed at first start, or the one you configured';

const cliEnv = z.object({
  ADMIN_URL: z.url().optional(),
  ADMIN_PORT: z.coerce.number().int().min(1).max(65535).default(3001),
  // Unset reads as this too: the message follows the variable's name.
  ADMIN_TOKEN: z.string({ error: TOKEN_REQUIRED }).min(1, TOKEN_REQUIRED),
});

type ProcedureType = 'query' | 'mutation';

function procedures(): Map<string, ProcedureType> {
  const defs = adminRouter._def.procedures as unknown as Record<string, { _def: { type: ProcedureType } }>;
  return new Map(Object.entries(defs).map(([path, p]) => [path, p._def.type]));
}

const USAGE = `usage: npm run admin -- <router.procedure> '<json input>'
       npm run admin -- deploy <workflow.json|yaml> <workspaceId> [name]
       npm run admin -- help
       npm run admin            (serves the admin plane)`;

export async function runCli(args: string[], out = console.log, err = console.error): Promise<number> {
  const [path, json] = args;
  const all = procedures();
  if (!path || path === 'help' || path === '--help') {
    out(USAGE);
    out(`procedures:\n${[...all].map(([p, t]) => `  ${p} (${t})`).join('\n')}`);
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
    const type = all.get(path);
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
  try {
    out(JSON.stringify(await call(createAdminClient({ url, token: env.data.ADMIN_TOKEN })), null, 2));
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      err(e.message);
      return 2;
    }
    // An answer from the server carries data (its code and status); a failed connection does not.
    if (e instanceof TRPCClientError && e.data) {
      const data = e.data as { code?: string; httpStatus?: number; details?: unknown } | undefined;
      err(
        JSON.stringify(
          { error: e.message, code: data?.code, status: data?.httpStatus, details: data?.details },
          null,
          2,
        ),
      );
      return 1;
    }
    err(`Could not reach the admin plane at ${url}: ${(e as Error).message}`);
    return 1;
  }
}
