// Users: people, identified by a unique e-mail address (case-insensitive).
import { conflict, isUniqueViolation } from '../errors.ts';
import type { Queryable } from './client.ts';

export interface User {
  id: string;
  name: string;
  email: string;
  createdAt: string;
}

type UserRow = { id: string; name: string; email: string; created_at: Date };
const toUser = (r: UserRow): User => ({
  id: r.id,
  name: r.name,
  email: r.email,
  createdAt: r.created_at.toISOString(),
});

export async function createUser(db: Queryable, input: { name: string; email: string }): Promise<User> {
  try {
    const [row] = await db.query<UserRow>('insert into users (name, email) values ($1, $2) returning *', [
      input.name,
      input.email,
    ]);
    return toUser(row as UserRow);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`A user with e-mail ${input.email} already exists`);
    throw err;
  }
}

export async function listUsers(db: Queryable): Promise<User[]> {
  return (await db.query<UserRow>('select * from users order by created_at, id')).map(toUser);
}
