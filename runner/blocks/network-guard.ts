// Forwards to net/network-guard.ts, where the outbound-request policy lives now: kept only for the
// sandbox modules (runner/pool.ts, runner/workers/function.ts) until their move to runner/sandbox/
// lands and they import net/ directly.
export * from '../../net/network-guard.ts';
