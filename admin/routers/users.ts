// Admin: users.
import { z } from 'zod';
import { createUser, listUsers } from '../../db/users.ts';
import { procedure, router } from '../trpc.ts';

export const usersRouter = router({
  create: procedure
    .input(z.object({ name: z.string().trim().min(1).max(100), email: z.email().max(254) }))
    .mutation(({ ctx, input }) => createUser(ctx.db, input)),
  list: procedure.query(({ ctx }) => listUsers(ctx.db)),
});
