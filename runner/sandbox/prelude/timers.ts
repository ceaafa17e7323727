// setTimeout, setInterval, their clear functions and queueMicrotask: each timer is a host timer (bridge
// `setTimer`) that resolves a promise of this realm, so its callback runs inside a pump, on the task's clock.
//
// A piece of the sandbox prelude (runner/sandbox/prelude.ts joins the pieces into the one script evaluated
// inside every new vm context): its source text runs in the sandbox's realm, so it references nothing
// outside itself but types and what it is handed (intrinsics captured before any user code ran).
import type { Intrinsics } from './intrinsics.ts';

export function defineTimers(k: Intrinsics, fail: (error: unknown) => void) {
  const { apply, CtxPromise, CtxTypeError, CtxMap, hostSetTimer, hostClearTimer, then } = k;

  // Sandbox timer id → host timer id; an entry exists while the timer is armed.
  let timers = new CtxMap<number, number>();
  let nextTimerId = 1;

  function arm(id: number, callback: () => void, delay: number, repeat: boolean): void {
    let fire!: () => void;
    const fired = new CtxPromise<void>((resolve) => {
      fire = resolve;
    });
    const hostId = hostSetTimer(delay, fire);
    timers.set(id, hostId);
    then(fired, () => {
      if (timers.get(id) !== hostId) return;
      if (repeat) arm(id, callback, delay, true);
      else timers.delete(id);
      try {
        callback();
      } catch (error) {
        fail(error);
      }
    });
  }

  function startTimer(callback: unknown, ms: unknown, args: unknown[], repeat: boolean): number {
    if (typeof callback !== 'function') throw new CtxTypeError('The callback must be a function');
    const delay = Math.max(Number(ms) || 0, 0);
    const id = nextTimerId++;
    arm(id, () => apply(callback, undefined, args), delay, repeat);
    return id;
  }

  function stopTimer(id: unknown): void {
    const hostId = timers.get(id as number);
    if (hostId === undefined) return;
    timers.delete(id as number);
    hostClearTimer(hostId);
  }

  const setTimeout = (callback: unknown, ms?: unknown, ...args: unknown[]) =>
    startTimer(callback, ms, args, false);
  const setInterval = (callback: unknown, ms?: unknown, ...args: unknown[]) =>
    startTimer(callback, ms, args, true);
  const clearTimeout = (id?: unknown) => stopTimer(id);
  const clearInterval = (id?: unknown) => stopTimer(id);
  const queueMicrotask = (callback: unknown) => {
    if (typeof callback !== 'function') throw new CtxTypeError('The callback must be a function');
    then(CtxPromise.resolve(), () => {
      try {
        callback();
      } catch (error) {
        fail(error);
      }
    });
  };

  /** A new task starts with no timers armed and ids from 1. */
  function resetTimers(): void {
    timers = new CtxMap<number, number>();
    nextTimerId = 1;
  }
  return { setTimeout, setInterval, clearTimeout, clearInterval, queueMicrotask, resetTimers };
}
