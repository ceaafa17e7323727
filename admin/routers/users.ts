// Admin: users.
import { z } from 'zod';
import { createUser, listUsers } from '../../db/users.ts';
import { procedure, router } from '../trpc.ts';

export const usersRouter = router({
  create: procedure
    .meta({ description: 'Create a user (name and email)' })
    .input(z.object({ name: z.string().trim().min(1).max(100), email: z.email().max(254) }))
    .mutation(({ ctx, input }) => createUser(ctx.db, input)),
  list: procedure.meta({ description: 'List every user' }).query(({ ctx }) => listUsers(ctx.db)),
});
