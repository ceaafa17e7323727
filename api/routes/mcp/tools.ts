// The deployed workflows of a workspace as MCP tools: a stable, valid tool name for each, its
// description, and a JSON Schema of its declared inputs. Pure: the same workflows always give the
// same tools, so any API process answers a client's tools/list and tools/call alike.
import { slugify } from '../../../db/slugs.ts';
import type { DeployedWorkflow } from '../../../db/workflow-deployments.ts';
import type { InputSpec } from '../../../runner/executor/definition.ts';
import type { Tool } from './sdk.ts';

/** What MCP clients accept as a tool name (several refuse anything longer or wider). */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_NAME = 64;

export interface WorkflowTool {
  workflowId: string;
  tool: Tool;
}

/** `base-suffix`, the base shortened so the whole stays within the tool-name limit. */
function suffixed(base: string, suffix: string): string {
  const room = MAX_NAME - suffix.length - 1;
  return `${base.slice(0, room).replace(/-+$/, '') || 'workflow'}-${suffix}`;
}

/**
 * Tool names for workflows listed oldest first: the slug of the name, and where an older workflow
 * already holds it, the slug with the first 8 hex digits of the workflow id (then the whole id).
 * A name therefore stays put while the workflows before it come and go, unless it was the one
 * shadowed by a same-named older workflow that is no longer deployed.
 */
export function toolNames(workflows: Pick<DeployedWorkflow, 'id' | 'name'>[]): string[] {
  const taken = new Set<string>();
  return workflows.map((wf) => {
    const base = slugify(wf.name, 'workflow');
    const hex = wf.id.replaceAll('-', '').toLowerCase();
    const candidates = [base, suffixed(base, hex.slice(0, 8)), suffixed(base, hex)];
    let name = candidates.find((n) => !taken.has(n));
    // Only a workflow named exactly like another's id-suffixed name gets here.
    for (let n = 2; !name; n++) if (!taken.has(suffixed(base, String(n)))) name = suffixed(base, String(n));
    taken.add(name);
    return name;
  });
}

const JSON_TYPE: Record<InputSpec['type'], string | null> = {
  string: 'string',
  number: 'number',
  boolean: 'boolean',
  object: 'object',
  array: 'array',
  any: null,
};

/**
 * The JSON Schema of a workflow's declared inputs, as execute checks them (checkInputs): a required
 * input with a default may be left out, `null` counts as absent, and undeclared inputs pass through
 * to the blocks (so additional properties stay allowed).
 */
export function inputSchemaOf(inputs: Record<string, InputSpec>): Tool['inputSchema'] {
  const properties: Record<string, object> = {};
  const required: string[] = [];
  for (const [name, spec] of Object.entries(inputs)) {
    const type = JSON_TYPE[spec.type] ?? null;
    properties[name] = {
      ...(type ? { type } : {}),
      ...(spec.description ? { description: spec.description } : {}),
      ...(spec.default !== undefined ? { default: spec.default } : {}),
    };
    if (spec.required && spec.default === undefined) required.push(name);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

/** One tool per deployed workflow, in the order given (oldest first keeps names stable). */
export function workflowTools(workflows: DeployedWorkflow[]): WorkflowTool[] {
  const names = toolNames(workflows);
  return workflows.map((wf, i) => ({
    workflowId: wf.id,
    tool: {
      name: names[i] as string,
      title: wf.name,
      description: wf.description.trim() || `Runs the workflow "${wf.name}" and returns its output.`,
      inputSchema: inputSchemaOf(wf.inputs),
    },
  }));
}
