// PDF: the text layer of every page (unpdf, a serverless build of PDF.js), pages apart by a blank line.
// A scanned PDF has no text layer, and this service does no OCR. PDF.js takes over the bytes' buffer
// (it is detached afterwards).
import { extractText, getDocumentProxy } from 'unpdf';
import { DocumentParseError, reasonOf } from './errors.ts';

export async function parsePdf(bytes: Uint8Array): Promise<string> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // Quiet: PDF.js otherwise warns on the console about every font it does without.
    pdf = await getDocumentProxy(bytes, { verbosity: 0 });
  } catch (error) {
    throw new DocumentParseError(openFailure(error));
  }
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    const pages = text.join('\n\n');
    if (pages.trim() === '') {
      throw new DocumentParseError(
        'The PDF has no text layer (a scanned PDF would need OCR, which this service does not do)',
      );
    }
    return pages;
  } catch (error) {
    if (error instanceof DocumentParseError) throw error;
    throw new DocumentParseError(`The PDF could not be read: ${reasonOf(error)}`);
  } finally {
    await pdf.loadingTask.destroy().catch(() => {});
  }
}

function openFailure(error: unknown): string {
  const name = error instanceof Error ? error.name : '';
  if (name === 'PasswordException') return 'The PDF is password-protected';
  return `The PDF could not be read: ${reasonOf(error)}`;
}
