// Per task: `begin` defines the read-only scope variables and the one-shot entry the compiled user script
// calls; `end` puts the global object back as it was before the first task.
//
// A piece of the sandbox prelude (runner/sandbox/prelude.ts joins the pieces into the one script evaluated
// inside every new vm context): its source text runs in the sandbox's realm, so it references nothing
// outside itself but types and what it is handed (intrinsics captured before any user code ran).
import type { SandboxControls } from './contract.ts';
import type { Intrinsics } from './intrinsics.ts';

/** What `begin` needs of the other pieces. */
export interface TaskHooks {
  /** The global the compiled user script calls with the user's function. */
  entryName: string;
  succeed(value: unknown): void;
  fail(error: unknown): void;
  resetTimers(): void;
  openConsole(): void;
}

export function defineTaskScope(k: Intrinsics, task: TaskHooks): SandboxControls {
  const {
    g,
    apply,
    defineProperty,
    deleteProperty,
    getOwnPropertyDescriptor,
    getPrototypeOf,
    isExtensible,
    ownKeys,
    setPrototypeOf,
    objectKeys,
    CtxSet,
    setHas,
    regExpExec,
    jsonParse,
    then,
  } = k;
  const { entryName, succeed, fail, resetTimers, openConsole } = task;

  // What `end` restores: the global object as it is now, before any user code ran. A scope variable or a
  // global that user code adds is dropped; a replaced or deleted one is put back (non-configurable ones
  // cannot change). Built-ins changed in place (a prototype's method, say) are not tracked: a context is
  // only ever reused for the same code in the same workspace (see runner/sandbox/worker.ts).
  const globalPrototype = getPrototypeOf(g);
  const baselineKeys = new CtxSet<PropertyKey>(ownKeys(g));
  const restorable: { key: PropertyKey; descriptor: PropertyDescriptor }[] = [];
  for (const key of ownKeys(g)) {
    const descriptor = getOwnPropertyDescriptor(g, key) as PropertyDescriptor;
    if (descriptor.configurable)
      restorable.push({ key, descriptor: { __proto__: null, ...descriptor } as PropertyDescriptor });
  }
  // Names a scope variable may not take: whatever the global object has, own or inherited.
  const reserved = new CtxSet<PropertyKey>();
  for (let o: object | null = g; o !== null; o = getPrototypeOf(o))
    for (const key of ownKeys(o)) reserved.add(key);
  const identifier = /^[A-Za-z_$][\w$]*$/;
  // Descriptors without a prototype: an inherited `get` or `value` (Object.prototype polluted by an
  // earlier task) cannot leak into them.
  const readOnly = (value: unknown): PropertyDescriptor =>
    ({ __proto__: null, value, writable: false, configurable: true, enumerable: true }) as PropertyDescriptor;

  function begin(scopeJson: string): boolean {
    try {
      resetTimers();
      openConsole();
      // Scope variables: JSON parsed here, so they are objects of this realm; read-only, as the spec says.
      const parsed: unknown = jsonParse(scopeJson);
      const scope = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
      const names = objectKeys(scope);
      for (let i = 0; i < names.length; i++) {
        const name = names[i] as string;
        if (apply(regExpExec, identifier, [name]) === null || apply(setHas, reserved, [name])) continue;
        if (!defineProperty(g, name, readOnly(scope[name]))) return false;
      }
      // The compiled user script calls this once with the user's async function.
      let started = false;
      const entry = (userFunction: () => Promise<unknown>) => {
        deleteProperty(g, entryName);
        if (started) return;
        started = true;
        try {
          then(userFunction(), succeed, fail);
        } catch (error) {
          fail(error);
        }
      };
      return defineProperty(g, entryName, {
        __proto__: null,
        value: entry,
        configurable: true,
      } as PropertyDescriptor);
    } catch {
      return false;
    }
  }

  function end(): boolean {
    try {
      const keys = ownKeys(g);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as PropertyKey;
        if (!apply(setHas, baselineKeys, [key]) && !deleteProperty(g, key)) return false;
      }
      for (let i = 0; i < restorable.length; i++) {
        const entry = restorable[i] as (typeof restorable)[number];
        if (!defineProperty(g, entry.key, entry.descriptor)) return false;
      }
      return setPrototypeOf(g, globalPrototype) && isExtensible(g);
    } catch {
      return false;
    }
  }

  return { begin, end };
}
