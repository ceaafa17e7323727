// crypto (getRandomValues, randomUUID, subtle) and CryptoKey: a subtle call crosses the bridge as JSON text
// (bridge `subtle`, performed by runner/sandbox/crypto-encoding.ts); keys stay on the host, a CryptoKey
// here holds only the key's number and public fields.
//
// A piece of the sandbox prelude (runner/sandbox/prelude.ts joins the pieces into the one script evaluated
// inside every new vm context): its source text runs in the sandbox's realm, so it references nothing
// outside itself but types and what it is handed (intrinsics captured before any user code ran).

import type { Encoding } from './encoding.ts';
import type { Intrinsics } from './intrinsics.ts';

export function defineWebCrypto(
  k: Intrinsics,
  encoding: Encoding,
  domError: (message: string, name: string) => Error,
  subtleMethods: readonly string[],
) {
  const {
    jsonStringify,
    jsonParse,
    isArray,
    isView,
    CtxPromise,
    CtxTypeError,
    CtxArrayBuffer,
    hostSubtle,
    hostRandomBytes,
    hostRandomUUID,
    then,
  } = k;
  const { bytesOf, latin1ToBytes, bytesToLatin1 } = encoding;

  interface KeyData {
    id: number;
    type: string;
    extractable: boolean;
    algorithm: unknown;
    usages: string[];
  }

  function defineCrypto() {
    let makeCryptoKey!: (data: KeyData) => CryptoKey;
    let cryptoKeyId!: (key: CryptoKey) => number;
    let constructingKey = false;

    class CryptoKey {
      #data: KeyData = { id: 0, type: '', extractable: false, algorithm: {}, usages: [] };
      static {
        makeCryptoKey = (data) => {
          constructingKey = true;
          const key = new CryptoKey();
          constructingKey = false;
          key.#data = data;
          return key;
        };
        cryptoKeyId = (key) => key.#data.id;
      }
      constructor() {
        if (!constructingKey) throw new CtxTypeError('Illegal constructor');
      }
      get type() {
        return this.#data.type;
      }
      get extractable() {
        return this.#data.extractable;
      }
      get algorithm() {
        return this.#data.algorithm;
      }
      get usages() {
        return [...this.#data.usages];
      }
    }

    function encodeCryptoArg(value: unknown): unknown {
      if (value instanceof CryptoKey) return { $k: cryptoKeyId(value) };
      if (value instanceof CtxArrayBuffer || isView(value)) return { $b: bytesToLatin1(bytesOf(value)) };
      if (isArray(value)) return value.map(encodeCryptoArg);
      if (typeof value === 'object' && value !== null) {
        const copy: Record<string, unknown> = {};
        for (const key of Object.keys(value))
          copy[key] = encodeCryptoArg((value as Record<string, unknown>)[key]);
        return copy;
      }
      return value;
    }

    function decodeCryptoResult(_key: string, value: unknown): unknown {
      if (typeof value !== 'object' || value === null) return value;
      const tagged = value as { $b?: string; $u8?: string; $key?: KeyData };
      if (typeof tagged.$b === 'string') return latin1ToBytes(tagged.$b).buffer;
      if (typeof tagged.$u8 === 'string') return latin1ToBytes(tagged.$u8);
      if (tagged.$key) return makeCryptoKey(tagged.$key);
      return value;
    }

    function callSubtle(method: string, args: unknown[]): Promise<unknown> {
      let payload: string;
      try {
        payload = jsonStringify(args.map(encodeCryptoArg));
      } catch (error) {
        return CtxPromise.reject(error);
      }
      const pending = new CtxPromise<string>((resolve, reject) =>
        hostSubtle(method, payload, resolve, reject),
      );
      return then(
        pending,
        (text) => jsonParse(text, decodeCryptoResult),
        (text: unknown) => {
          const { name, message } = jsonParse(String(text)) as { name: string; message: string };
          throw name === 'TypeError' ? new CtxTypeError(message) : domError(message, name);
        },
      );
    }

    const subtle: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
    for (let i = 0; i < subtleMethods.length; i++) {
      const method = subtleMethods[i] as string;
      subtle[method] = (...args: unknown[]) => callSubtle(method, args);
    }

    function getRandomValues<T extends ArrayBufferView>(array: T): T {
      const integer =
        isView(array) &&
        !(array instanceof DataView) &&
        !(array instanceof Float32Array) &&
        !(array instanceof Float64Array);
      if (!integer) throw domError('The data is not an integer typed array', 'TypeMismatchError');
      if (array.byteLength > 65536) {
        throw domError(`The requested length exceeds 65,536 bytes`, 'QuotaExceededError');
      }
      bytesOf(array).set(latin1ToBytes(hostRandomBytes(array.byteLength)));
      return array;
    }

    const crypto = { getRandomValues, randomUUID: () => hostRandomUUID(), subtle };
    return { CryptoKey, crypto };
  }

  // Created on first use: defining a class costs a few microseconds in every new context.
  let cryptoClasses: ReturnType<typeof defineCrypto> | undefined;
  const webCrypto = () => (cryptoClasses ??= defineCrypto());
  return { webCrypto };
}
