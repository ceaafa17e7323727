// Admin: the console's overview of the last hour (executions per minute by final status with p50/p95
// duration, executions in flight, queue backlog, ingestion backlog), for the whole service or
// narrowed to one organization or workspace. Queue figures are always service-wide.
import { z } from 'zod';
import { overviewStats } from '../../db/stats.ts';
import { QUEUES } from '../../jobs/queues.ts';
import { procedure, router } from '../trpc.ts';

export const statsRouter = router({
  overview: procedure
    .meta({
      description: 'The last hour by the minute, executions in flight and queue and ingestion backlogs',
    })

    .input(z.object({ organizationId: z.uuid().optional(), workspaceId: z.uuid().optional() }).optional())
    .query(({ ctx, input }) => overviewStats(ctx.db, Object.values(QUEUES), input ?? {})),
});
