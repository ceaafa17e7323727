// The workflow a trigger (a manual run, a schedule, a webhook) starts, as the admin routers take it,
// and the filter their listings take: one schema each, so every trigger checks its target alike.
import { z } from 'zod';

/** A trigger's workflow; `.extend()` it with the trigger's own fields. */
export const triggerTarget = z.object({
  workflowId: z.uuid(),
  /** When given, the workflow must belong to it. */
  workspaceId: z.uuid().optional(),
});

/** A listing of triggers: those of a workspace, of a workflow, or both. */
export const triggerFilter = z
  .object({ workspaceId: z.uuid().optional(), workflowId: z.uuid().optional() })
  .refine((f) => f.workspaceId !== undefined || f.workflowId !== undefined, {
    message: 'Give workspaceId or workflowId',
    path: ['workspaceId'],
  });
