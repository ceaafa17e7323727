// The host side of the sandbox's Web Crypto (runner/sandbox/prelude/crypto.ts): performs a `crypto.subtle`
// call whose arguments the prelude encoded as JSON text, and encodes the result the same way. Bytes cross
// as latin1 strings (`$b`: an ArrayBuffer, `$u8`: a Uint8Array); CryptoKeys stay on this side, in the
// task's key store, and cross as their number (`$k` in, `$key` out, with the key's public fields).
import { webcrypto } from 'node:crypto';
import { SUBTLE_METHODS } from './prelude/contract.ts';

/** The CryptoKeys a task has been given, by number; cleared when the task ends. */
export interface KeyStore {
  keys: Map<number, CryptoKey>;
  nextKeyId: number;
}

const SUBTLE_METHOD_SET = new Set(SUBTLE_METHODS);

export async function performSubtle(execution: KeyStore, method: string, argsJson: string): Promise<string> {
  if (!SUBTLE_METHOD_SET.has(method)) throw new TypeError(`crypto.subtle.${String(method)} is not supported`);
  const args = JSON.parse(String(argsJson), (_key, value) => decodeCryptoArg(execution, value)) as unknown[];
  const subtle = webcrypto.subtle as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const result = await subtle[method]?.(...args);
  return JSON.stringify(encodeCryptoResult(execution, result));
}

function decodeCryptoArg(execution: KeyStore, value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const tagged = value as { $b?: unknown; $k?: unknown };
  if (typeof tagged.$b === 'string') return new Uint8Array(Buffer.from(tagged.$b, 'latin1'));
  if (typeof tagged.$k === 'number') {
    const key = execution.keys.get(tagged.$k);
    if (!key) throw new TypeError('Unknown CryptoKey');
    return key;
  }
  return value;
}

function encodeCryptoResult(execution: KeyStore, value: unknown): unknown {
  if (value instanceof ArrayBuffer) return { $b: Buffer.from(value).toString('latin1') };
  if (ArrayBuffer.isView(value)) {
    return { $u8: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('latin1') };
  }
  if (value instanceof CryptoKey) {
    const id = execution.nextKeyId++;
    execution.keys.set(id, value);
    const { type, extractable, algorithm, usages } = value;
    return { $key: { id, type, extractable, algorithm: encodeCryptoResult(execution, algorithm), usages } };
  }
  if (Array.isArray(value)) return value.map((item) => encodeCryptoResult(execution, item));
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(([k, v]) => [k, encodeCryptoResult(execution, v)]);
    return Object.fromEntries(entries);
  }
  return value;
}

export function cryptoError(error: unknown): string {
  if (error instanceof Error) return JSON.stringify({ name: error.name, message: error.message });
  return JSON.stringify({ name: 'OperationError', message: 'The operation failed' });
}
