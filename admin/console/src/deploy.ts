// Deploying a pasted definition: parse the text (syntax errors stop here, at their lines), save it as
// the workflow's draft (new or existing), deploy it; the service's validation issues come back
// placed at the lines their paths name.
import {
  type ParsedDefinition,
  parseDefinitionText,
  placeIssues,
  type TextIssue,
} from './definition-text.ts';
import { errorInfo, trpc } from './trpc.ts';

export type DeployOutcome =
  | { ok: true; workflowId: string; version: number }
  | { ok: false; issues: TextIssue[]; error?: unknown };

export async function deployText(
  text: string,
  target: { workflowId: string } | { workspaceId: string; name: string; description?: string },
): Promise<DeployOutcome> {
  const parsed: ParsedDefinition = parseDefinitionText(text);
  if (parsed.value === undefined) return { ok: false, issues: parsed.syntaxErrors };
  let workflowId: string;
  try {
    if ('workflowId' in target) {
      workflowId = target.workflowId;
      await trpc.workflows.update.mutate({ id: workflowId, definition: parsed.value });
    } else {
      const created = await trpc.workflows.create.mutate({ ...target, definition: parsed.value });
      workflowId = created.id;
    }
    const { version } = await trpc.workflows.deploy.mutate({ id: workflowId });
    return { ok: true, workflowId, version };
  } catch (err) {
    const info = errorInfo(err);
    const inDefinition = info.details.filter((d) => d.path[0] === 'definition');
    // Issues of other fields (a name, say) stay with the error notice.
    return inDefinition.length && inDefinition.length === info.details.length
      ? { ok: false, issues: placeIssues(parsed, inDefinition) }
      : { ok: false, issues: [], error: err };
  }
}
