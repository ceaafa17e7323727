// runner/sandbox/prelude/crypto.ts: crypto.subtle calls cross the bridge encoded (bytes, keys by number) and
// come back as values of the sandbox; CryptoKeys cannot be forged; getRandomValues checks its argument.
import { describe, expect, it } from 'vitest';
import { sandbox } from './sandbox.ts';

const { value } = sandbox();

describe('prelude: Web Crypto', () => {
  it('derives bits and wraps keys, with results of the sandbox realm', async () => {
    const result = await value(`const enc = new TextEncoder();
      const base = await crypto.subtle.importKey('raw', enc.encode('password'), 'PBKDF2', false, ['deriveBits']);
      const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', salt: enc.encode('salt'), iterations: 1, hash: 'SHA-256' }, base, 128);
      const hex = Array.from(new Uint8Array(bits), (b) => b.toString(16).padStart(2, '0')).join('');
      const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
      return [bits instanceof ArrayBuffer, hex, pair.privateKey instanceof CryptoKey, pair.publicKey.type, pair.privateKey.extractable]`);
    expect(result).toEqual([true, '120fb6cffcf8b32c43e7225256c4f837', true, 'public', true]);
  });

  it('refuses forged keys and arguments the host would not take', async () => {
    const result = await value(`const refused = [];
      try { new CryptoKey() } catch (e) { refused.push(e.name) }
      try { await crypto.subtle.sign('HMAC', { type: 'secret' }, new Uint8Array(1)) } catch (e) { refused.push(e.name) }
      try { crypto.getRandomValues(new Float64Array(2)) } catch (e) { refused.push(e.name) }
      try { crypto.getRandomValues(new Uint8Array(65537)) } catch (e) { refused.push(e.name) }
      return [refused, crypto.getRandomValues(new Uint32Array(4)).length]`);
    expect(result).toEqual([['TypeError', 'TypeError', 'TypeMismatchError', 'QuotaExceededError'], 4]);
  });
});
