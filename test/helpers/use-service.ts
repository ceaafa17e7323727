// The preamble most test files share: before their tests, a service and tenants; after them, the
// service closed. The values are named at the top of the file in one line and used by its tests as
// they are, though they are made only when the tests start.
import { afterAll, beforeAll } from 'vitest';
import type { PlanName } from '../../db/plans.ts';
import { createTenant, startTestService, type Tenant, type TestService } from './service.ts';

/**
 * Stands in for a value a file's beforeAll makes: every read goes to that value once it exists, and
 * a read before it does is an error that says so.
 */
export function madeLater<T extends object>(get: () => T | undefined, what: string): T {
  const value = () => {
    const v = get();
    if (!v) throw new Error(`${what} is read before the file's beforeAll made it`);
    return v;
  };
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(value(), key),
    has: (_, key) => Reflect.has(value(), key),
    ownKeys: () => Reflect.ownKeys(value()),
    getOwnPropertyDescriptor: (_, key) => Reflect.getOwnPropertyDescriptor(value(), key),
  });
}

/**
 * A service (with a runner in process when `runner`) and two tenants on `plan`: `tenant`, whose
 * workspace the tests work in, and `other`, for what must stay out of its reach.
 */
export function useService(options: { runner?: boolean; plan?: PlanName } = {}) {
  let svc: TestService | undefined;
  let tenant: Tenant | undefined;
  let other: Tenant | undefined;
  beforeAll(async () => {
    svc = await startTestService({}, { runner: options.runner ?? false });
    tenant = await createTenant(svc.admin, { plan: options.plan ?? 'free' });
    other = await createTenant(svc.admin, { plan: options.plan ?? 'free' });
  });
  afterAll(() => svc?.close());
  return {
    svc: madeLater(() => svc, 'The service'),
    tenant: madeLater(() => tenant, 'The tenant'),
    other: madeLater(() => other, 'The other tenant'),
  };
}
