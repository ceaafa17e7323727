// The admin plane's root router; its type is what the typed client and the CLI are built on.
import { callbacksRouter } from './routers/callbacks.ts';
import { executionsRouter } from './routers/executions.ts';
import { filesRouter } from './routers/files.ts';
import { foldersRouter } from './routers/folders.ts';
import { keysRouter } from './routers/keys.ts';
import { knowledgeRouter } from './routers/knowledge.ts';
import { membersRouter } from './routers/members.ts';
import { orgsRouter } from './routers/orgs.ts';
import { quotasRouter } from './routers/quotas.ts';
import { schedulesRouter } from './routers/schedules.ts';
import { secretsRouter } from './routers/secrets.ts';
import { statsRouter } from './routers/stats.ts';
import { usersRouter } from './routers/users.ts';
import { webhooksRouter } from './routers/webhooks.ts';
import { workflowsRouter } from './routers/workflows.ts';
import { workspacesRouter } from './routers/workspaces.ts';
import { router } from './trpc.ts';

export const adminRouter = router({
  orgs: orgsRouter,
  users: usersRouter,
  members: membersRouter,
  workspaces: workspacesRouter,
  keys: keysRouter,
  quotas: quotasRouter,
  workflows: workflowsRouter,
  secrets: secretsRouter,
  folders: foldersRouter,
  files: filesRouter,
  knowledge: knowledgeRouter,
  schedules: schedulesRouter,
  executions: executionsRouter,
  callbacks: callbacksRouter,
  webhooks: webhooksRouter,
  stats: statsRouter,
});

export type AdminRouter = typeof adminRouter;
