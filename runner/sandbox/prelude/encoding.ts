// Bytes and text: UTF-8 encoding and WHATWG decoding, latin1 (how bytes cross the bridge), TextEncoder and
// TextDecoder, btoa and atob.
//
// A piece of the sandbox prelude (runner/sandbox/prelude.ts joins the pieces into the one script evaluated
// inside every new vm context): its source text runs in the sandbox's realm, so it references nothing
// outside itself but types and what it is handed (intrinsics captured before any user code ran).
import type { Intrinsics } from './intrinsics.ts';

export function defineEncoding(k: Intrinsics, domError: (message: string, name: string) => Error) {
  const { apply, fromCharCode, isView, CtxTypeError, CtxRangeError, CtxUint8Array, CtxArrayBuffer } = k;

  function bytesOf(source: unknown): Uint8Array {
    if (source instanceof CtxArrayBuffer) return new CtxUint8Array(source);
    if (isView(source)) return new CtxUint8Array(source.buffer, source.byteOffset, source.byteLength);
    throw new CtxTypeError('Expected an ArrayBuffer or an ArrayBuffer view');
  }

  function latin1ToBytes(text: string): Uint8Array {
    const bytes = new CtxUint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return bytes;
  }

  function bytesToLatin1(bytes: Uint8Array): string {
    let text = '';
    for (let i = 0; i < bytes.length; i += 8192) {
      text += apply(fromCharCode, undefined, bytes.subarray(i, i + 8192) as unknown as number[]);
    }
    return text;
  }

  function utf8Encode(text: string): Uint8Array {
    const out = new CtxUint8Array(text.length * 3);
    let n = 0;
    for (let i = 0; i < text.length; i++) {
      let code = text.charCodeAt(i);
      if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
        const next = text.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
          i++;
        }
      }
      if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
      n = writeUtf8(out, n, code);
    }
    return out.slice(0, n);
  }

  function writeUtf8(out: Uint8Array, n: number, code: number): number {
    if (code < 0x80) {
      out[n] = code;
      return n + 1;
    }
    if (code < 0x800) {
      out[n] = 0xc0 | (code >> 6);
      out[n + 1] = 0x80 | (code & 0x3f);
      return n + 2;
    }
    if (code < 0x10000) {
      out[n] = 0xe0 | (code >> 12);
      out[n + 1] = 0x80 | ((code >> 6) & 0x3f);
      out[n + 2] = 0x80 | (code & 0x3f);
      return n + 3;
    }
    out[n] = 0xf0 | (code >> 18);
    out[n + 1] = 0x80 | ((code >> 12) & 0x3f);
    out[n + 2] = 0x80 | ((code >> 6) & 0x3f);
    out[n + 3] = 0x80 | (code & 0x3f);
    return n + 4;
  }

  // WHATWG UTF-8 decode: each maximal invalid subpart becomes one U+FFFD (or an error when fatal).
  function utf8Decode(bytes: Uint8Array, fatal: boolean): string {
    const units: number[] = [];
    let text = '';
    let i = 0;
    const invalid = () => {
      if (fatal) throw new CtxTypeError('The encoded data was not valid for encoding utf-8');
      units.push(0xfffd);
    };
    while (i < bytes.length) {
      if (units.length >= 8192) {
        text += apply(fromCharCode, undefined, units.splice(0));
      }
      const lead = bytes[i] as number;
      if (lead < 0x80) {
        units.push(lead);
        i++;
        continue;
      }
      let need = 0;
      let code = 0;
      let lower = 0x80;
      let upper = 0xbf;
      if (lead >= 0xc2 && lead <= 0xdf) {
        need = 1;
        code = lead & 0x1f;
      } else if (lead >= 0xe0 && lead <= 0xef) {
        need = 2;
        code = lead & 0xf;
        if (lead === 0xe0) lower = 0xa0;
        if (lead === 0xed) upper = 0x9f;
      } else if (lead >= 0xf0 && lead <= 0xf4) {
        need = 3;
        code = lead & 0x7;
        if (lead === 0xf0) lower = 0x90;
        if (lead === 0xf4) upper = 0x8f;
      } else {
        invalid();
        i++;
        continue;
      }
      let j = 1;
      for (; j <= need; j++) {
        const next = bytes[i + j];
        if (next === undefined || next < lower || next > upper) break;
        lower = 0x80;
        upper = 0xbf;
        code = (code << 6) | (next & 0x3f);
      }
      if (j <= need) {
        invalid();
        i += j;
        continue;
      }
      i += need + 1;
      if (code > 0xffff) {
        code -= 0x10000;
        units.push(0xd800 + (code >> 10), 0xdc00 + (code & 0x3ff));
      } else {
        units.push(code);
      }
    }
    return text + apply(fromCharCode, undefined, units);
  }

  function defineText() {
    class TextEncoder {
      get encoding() {
        return 'utf-8';
      }
      encode(input: unknown = ''): Uint8Array {
        return utf8Encode(String(input));
      }
      encodeInto(source: unknown, destination: Uint8Array): { read: number; written: number } {
        const text = String(source);
        const scratch = new CtxUint8Array(4);
        let read = 0;
        let written = 0;
        while (read < text.length) {
          const code = text.codePointAt(read) as number;
          const units = code > 0xffff ? 2 : 1;
          const size = writeUtf8(scratch, 0, code >= 0xd800 && code <= 0xdfff ? 0xfffd : code);
          if (written + size > destination.length) break;
          destination.set(scratch.subarray(0, size), written);
          written += size;
          read += units;
        }
        return { read, written };
      }
    }

    class TextDecoder {
      #fatal: boolean;
      #ignoreBOM: boolean;
      constructor(label: unknown = 'utf-8', options: { fatal?: boolean; ignoreBOM?: boolean } = {}) {
        const name = String(label).trim().toLowerCase();
        if (name !== 'utf-8' && name !== 'utf8' && name !== 'unicode-1-1-utf-8') {
          throw new CtxRangeError(`The "${name}" encoding is not supported`);
        }
        this.#fatal = Boolean(options?.fatal);
        this.#ignoreBOM = Boolean(options?.ignoreBOM);
      }
      get encoding() {
        return 'utf-8';
      }
      get fatal() {
        return this.#fatal;
      }
      get ignoreBOM() {
        return this.#ignoreBOM;
      }
      decode(input?: unknown): string {
        if (input === undefined) return '';
        const text = utf8Decode(bytesOf(input), this.#fatal);
        return !this.#ignoreBOM && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
      }
    }
    return { TextEncoder, TextDecoder };
  }

  const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

  function btoa(data: unknown): string {
    const text = String(data);
    let out = '';
    for (let i = 0; i < text.length; i += 3) {
      const a = text.charCodeAt(i);
      const b = i + 1 < text.length ? text.charCodeAt(i + 1) : -1;
      const c = i + 2 < text.length ? text.charCodeAt(i + 2) : -1;
      if (a > 0xff || b > 0xff || c > 0xff) {
        throw domError('Invalid character', 'InvalidCharacterError');
      }
      out += BASE64[a >> 2];
      out += BASE64[((a & 3) << 4) | (b < 0 ? 0 : b >> 4)];
      out += b < 0 ? '=' : BASE64[((b & 15) << 2) | (c < 0 ? 0 : c >> 6)];
      out += c < 0 ? '=' : BASE64[c & 63];
    }
    return out;
  }

  function atob(data: unknown): string {
    let text = String(data).replace(/[\t\n\f\r ]/g, '');
    if (text.length % 4 === 0) text = text.replace(/==?$/, '');
    if (text.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(text)) {
      throw domError('The string to be decoded is not correctly encoded.', 'InvalidCharacterError');
    }
    let out = '';
    let buffer = 0;
    let bits = 0;
    for (let i = 0; i < text.length; i++) {
      buffer = (buffer << 6) | BASE64.indexOf(text[i] as string);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out += fromCharCode((buffer >> bits) & 0xff);
      }
    }
    return out;
  }

  // Created on first use: defining a class costs a few microseconds in every new context.
  let textClasses: ReturnType<typeof defineText> | undefined;
  const text = () => (textClasses ??= defineText());
  return { bytesOf, latin1ToBytes, bytesToLatin1, utf8Encode, utf8Decode, text, btoa, atob };
}

export type Encoding = ReturnType<typeof defineEncoding>;
