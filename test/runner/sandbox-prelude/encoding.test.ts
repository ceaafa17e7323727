// runner/sandbox/prelude/encoding.ts: UTF-8 both ways (with the WHATWG replacement rules), TextEncoder's
// encodeInto, TextDecoder's options, and base64.
import { describe, expect, it } from 'vitest';
import { sandbox } from './sandbox.ts';

const { value } = sandbox();

describe('prelude: text encoding and base64', () => {
  it('encodes lone surrogates as U+FFFD and encodes into a buffer as far as it fits', async () => {
    const result = await value(`const encoder = new TextEncoder();
      const into = new Uint8Array(4);
      const { read, written } = encoder.encodeInto('aé€', into);
      return [encoder.encoding, Array.from(encoder.encode('\\ud800')), read, written, Array.from(into)]`);
    expect(result).toEqual(['utf-8', [0xef, 0xbf, 0xbd], 2, 3, [0x61, 0xc3, 0xa9, 0]]);
  });

  it('decodes with the replacement rules, the BOM option and the labels it knows', async () => {
    const result = await value(`const bom = new Uint8Array([0xef, 0xbb, 0xbf, 0x61]);
      let label = null;
      try { new TextDecoder('latin1') } catch (e) { label = e.name }
      return [new TextDecoder().decode(new Uint8Array([0xe2, 0x82, 0x61, 0xf0, 0x9f, 0x98, 0x80])),
        new TextDecoder().decode(bom), new TextDecoder('utf8', { ignoreBOM: true }).decode(bom).length,
        new TextDecoder().decode(), label, new TextDecoder('UTF-8', { fatal: true }).fatal]`);
    expect(result).toEqual(['\uFFFDa😀', 'a', 2, '', 'RangeError', true]);
  });

  it('refuses to base64-encode characters beyond latin1', async () => {
    const result = await value(`let refused = null;
      try { btoa('€') } catch (e) { refused = e.name }
      return [refused, btoa('\\xff\\x00'), atob('/wA='), atob('YQ')]`);
    expect(result).toEqual(['InvalidCharacterError', '/wA=', '\xff\x00', 'a']);
  });
});
