// The value kinds the environment's variables share, and the documentation's note for a variable
// without a default.
import { z } from 'zod';

// 0 asks the system for a free port (the address printed at start-up is the real one).
export const port = z.coerce.number().int().min(0).max(65535);
export const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

// What a variable without a default means when it is unset, for the documentation's Default column
// (a `.meta()` key beside the `.describe()` text); a variable with a default shows its default.
export const whenUnset = (text: string) => ({ whenUnset: text });

/** Decodes a 32-byte key from hex or base64; null when it is neither. */
export function decodeKey(value: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  const buf = Buffer.from(value, 'base64');
  return buf.length === 32 ? buf : null;
}
