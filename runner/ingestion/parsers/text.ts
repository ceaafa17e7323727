// Plain text and Markdown: bytes to a string. UTF-8 (a BOM is dropped), or UTF-16 when a BOM says so;
// anything else is refused rather than guessed, since a wrong guess embeds garbage.
import { DocumentParseError } from './errors.ts';

export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decode(bytes, 'utf-16le');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decode(bytes, 'utf-16be');
  return decode(bytes, 'utf-8');
}

function decode(bytes: Uint8Array, encoding: string): string {
  try {
    // The decoder drops a BOM of its own encoding.
    return new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch {
    throw new DocumentParseError(
      encoding === 'utf-8'
        ? 'The document is not valid UTF-8 text'
        : `The document is not valid ${encoding.toUpperCase()} text`,
    );
  }
}
