// Word (.docx): the document's raw text through mammoth, paragraphs apart by a blank line.
import mammoth from 'mammoth';
import { DocumentParseError, reasonOf } from './errors.ts';

export async function parseDocx(bytes: Uint8Array): Promise<string> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  try {
    const { value } = await mammoth.extractRawText({ buffer });
    return value;
  } catch (error) {
    // jszip's messages for a file that is not a zip ("Can't find end of central directory…") mean
    // nothing to a user; anything else (a zip without a Word document in it) is passed on.
    const reason = /central directory|zip/i.test(reasonOf(error))
      ? 'it is not a valid .docx file'
      : reasonOf(error);
    throw new DocumentParseError(`The Word document could not be read: ${reason}`);
  }
}
