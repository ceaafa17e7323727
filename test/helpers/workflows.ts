// Deploying workflows for tests, through the admin plane.
import type { AdminClient } from '../../admin/client.ts';
import type { TestService } from './service.ts';

export async function deployWorkflow(
  admin: AdminClient,
  workspaceId: string,
  definition: unknown,
  name = 'test workflow',
) {
  const wf = await admin.workflows.create.mutate({ workspaceId, name, definition });
  await admin.workflows.deploy.mutate({ id: wf.id });
  return wf.id;
}

/** Polls a job until it is completed or failed (each poll is a real request; the runner works meanwhile). */
export async function pollJob(call: TestService['call'], key: string, jobId: string, maxPolls = 400) {
  for (let i = 0; i < maxPolls; i++) {
    const res = await call('GET', `/api/jobs/${jobId}`, { key });
    if (['completed', 'failed', 'cancelled'].includes(res.body.status)) return res;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`job ${jobId} did not finish`);
}
