// The media type a stored file is served with: the one its upload declared, unless that says
// nothing (application/octet-stream, or text/plain: what a part without Content-Type reads as, by
// RFC 7578's default), in which case its first bytes are sniffed for a known signature.
import { fileTypeFromBuffer } from 'file-type';
import { isMediaType } from '../db/files.ts';

/** How much of a file's start the sniffing looks at (file-type's advised sample). */
export const SNIFF_BYTES = 4100;

const UNINFORMATIVE = new Set(['application/octet-stream', 'text/plain']);

export async function mediaTypeOf(declared: string | undefined, head: Uint8Array): Promise<string> {
  const lower = declared?.toLowerCase();
  const claimed = lower && isMediaType(lower) ? lower : undefined;
  if (claimed && !UNINFORMATIVE.has(claimed)) return claimed;
  const sniffed = head.length ? (await fileTypeFromBuffer(head))?.mime : undefined;
  return (sniffed && isMediaType(sniffed) ? sniffed : undefined) ?? claimed ?? 'application/octet-stream';
}
