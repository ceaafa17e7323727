// Document kinds and parsing: each supported format on a small real file (text formats made here, PDF
// and DOCX from test/fixtures/knowledge), and the reasons given for files that cannot be read.
import { readFileSync } from 'node:fs';
import { crc32, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { documentKindOf, SUPPORTED_DOCUMENT_TYPES } from '../../runner/ingestion/document-types.ts';
import { DocumentParseError, parseDocument } from '../../runner/ingestion/parse.ts';
import { MAX_ARTICLE_SOURCE_CHARS } from '../../runner/ingestion/parsers/html-main-content.ts';

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/knowledge/${name}`, import.meta.url)));
const utf8 = (text: string) => new TextEncoder().encode(text);

async function parseError(bytes: Uint8Array, kind: Parameters<typeof parseDocument>[1]): Promise<string> {
  const error = await parseDocument(bytes, kind).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DocumentParseError);
  return (error as DocumentParseError).message;
}

describe('documentKindOf', () => {
  it('goes by extension first, whatever the media type', () => {
    expect(documentKindOf('notes.TXT', 'application/octet-stream')).toBe('txt');
    expect(documentKindOf('notes.text', '')).toBe('txt');
    expect(documentKindOf('README.markdown', 'text/plain')).toBe('md');
    expect(documentKindOf('data.csv', 'application/vnd.ms-excel')).toBe('csv');
    expect(documentKindOf('page.htm', 'text/plain')).toBe('html');
    expect(documentKindOf('report.final.pdf', 'application/octet-stream')).toBe('pdf');
    expect(documentKindOf('handbook.docx', '')).toBe('docx');
  });

  it('falls back to the media type, ignoring its parameters', () => {
    expect(documentKindOf('upload', 'text/plain; charset=utf-8')).toBe('txt');
    expect(documentKindOf('upload.bin', 'Application/JSON')).toBe('json');
    expect(documentKindOf('blob', 'text/markdown')).toBe('md');
    expect(documentKindOf('blob', 'text/html;charset=ISO-8859-1')).toBe('html');
    expect(
      documentKindOf('blob', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'),
    ).toBe('docx');
  });

  it('recognises nothing else', () => {
    expect(documentKindOf('photo.png', 'image/png')).toBeNull();
    expect(documentKindOf('old.doc', 'application/msword')).toBeNull();
    expect(documentKindOf('x.constructor', 'application/x-unknown')).toBeNull();
    expect(documentKindOf('noextension', '')).toBeNull();
    expect(SUPPORTED_DOCUMENT_TYPES).toContain('.docx');
  });
});

describe('text and Markdown', () => {
  it('decodes UTF-8, drops a BOM and normalises line ends', async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('Café au lait\r\nsecond line\rthird')]);
    expect(await parseDocument(bytes, 'txt')).toBe('Café au lait\nsecond line\nthird');
  });

  it('reads UTF-16 when a BOM says so', async () => {
    const body = Buffer.from('Grüße aus Köln', 'utf16le');
    const bytes = new Uint8Array([0xff, 0xfe, ...body]);
    expect(await parseDocument(bytes, 'txt')).toBe('Grüße aus Köln');
  });

  it('keeps Markdown as written', async () => {
    const md = '# Title\n\nSome *emphasis* and a [link](https://example.com).\n\n- item\n';
    expect(await parseDocument(utf8(md), 'md')).toBe(md);
  });

  it('removes NUL and other control characters', async () => {
    expect(await parseDocument(utf8('a\u0000b\u0007c\td'), 'txt')).toBe('abc\td');
  });

  it('refuses invalid UTF-8, an empty file and a file with no text', async () => {
    expect(await parseError(new Uint8Array([0x68, 0x69, 0xff, 0xfe, 0x80]), 'txt')).toMatch(
      /not valid UTF-8/,
    );
    expect(await parseError(new Uint8Array(0), 'md')).toMatch(/empty/);
    expect(await parseError(utf8(' \n\t\r\n '), 'txt')).toMatch(/no text/);
  });
});

describe('CSV', () => {
  it('renders each record as column: value lines, one paragraph per record', async () => {
    const csv = 'name,city,note\nAda,London,"likes, commas"\nGrace,,"two\nlines"\n';
    expect(await parseDocument(utf8(csv), 'csv')).toBe(
      'name: Ada\ncity: London\nnote: likes, commas\n\nname: Grace\nnote: two\nlines',
    );
  });

  it('detects a semicolon or tab delimiter', async () => {
    expect(await parseDocument(utf8('a;b\n1;2,5\n'), 'csv')).toBe('a: 1\nb: 2,5');
    expect(await parseDocument(utf8('a\tb\nx\ty\n'), 'csv')).toBe('a: x\nb: y');
  });

  it('tolerates ragged rows and names unnamed columns', async () => {
    expect(await parseDocument(utf8('a,\n1,2,3\n'), 'csv')).toBe('a: 1\nColumn 2: 2\nColumn 3: 3');
  });

  it('refuses a malformed file', async () => {
    expect(await parseError(utf8('a,b\n"unclosed,2\n'), 'csv')).toMatch(/^The CSV could not be read: /);
  });
});

describe('JSON', () => {
  it('renders scalars with their paths, top-level records apart', async () => {
    const json = JSON.stringify([
      { name: 'Ada', tags: ['math', 'engines'], address: { city: 'London' } },
      { name: 'Grace', 'full name': 'Grace Hopper', active: true, manager: null },
    ]);
    expect(await parseDocument(utf8(json), 'json')).toBe(
      [
        '[0].name: Ada',
        '[0].tags[0]: math',
        '[0].tags[1]: engines',
        '[0].address.city: London',
        '',
        '[1].name: Grace',
        '[1]["full name"]: Grace Hopper',
        '[1].active: true',
        '[1].manager: null',
      ].join('\n'),
    );
  });

  it('renders a scalar document as itself', async () => {
    expect(await parseDocument(utf8('"just a string"'), 'json')).toBe('just a string');
  });

  it('survives deep nesting', async () => {
    const deep = `${'['.repeat(5000)}"bottom"${']'.repeat(5000)}`;
    expect(await parseDocument(utf8(deep), 'json')).toMatch(/: bottom$/);
  });

  it('refuses invalid JSON and an empty document', async () => {
    expect(await parseError(utf8('{"a": 1,}'), 'json')).toMatch(/^The JSON could not be read: /);
    expect(await parseError(utf8('{}'), 'json')).toMatch(/no text/);
  });
});

describe('HTML', () => {
  it('keeps the visible text, not scripts, styles, images or link targets', async () => {
    const html = `<!doctype html><html><head><title>T</title><style>p { color: red }</style>
      <script>var secret = 1;</script></head><body><h1>Opening hours</h1>
      <p>We open at <b>9</b> &amp; close at 17. See <a href="https://example.com/x">the map</a>.</p>
      <img src="a.png" alt="logo"><noscript>enable js</noscript>
      <ul><li>Monday</li><li>Tuesday</li></ul></body></html>`;
    const text = await parseDocument(utf8(html), 'html');
    expect(text).toContain('Opening hours');
    expect(text).toContain('We open at 9 & close at 17. See the map.');
    expect(text).toMatch(/Monday\n.*Tuesday/);
    for (const absent of ['secret', 'color', 'example.com', 'a.png', 'enable js']) {
      expect(text).not.toContain(absent);
    }
  });

  it('renders tables as rows of cells', async () => {
    const html = '<table><tr><th>Plan</th><th>Price</th></tr><tr><td>Pro</td><td>20</td></tr></table>';
    const text = await parseDocument(utf8(html), 'html');
    expect(text).toMatch(/Plan\s+Price\nPro\s+20/);
  });

  describe('a page that is an article', () => {
    const paragraphs = [
      'Sourdough bread is leavened by a culture of wild yeast and lactic acid bacteria, fed every day with flour and water.',
      'Mix the levain with flour, water and salt, fold the dough every half hour, and let it rise overnight in the cold.',
      'Bake the loaf in a covered pot in a very hot oven, then uncover it until the crust is deep brown and crackling.',
    ];
    const article = (extra = '') =>
      `<!doctype html><html><head><title>Sourdough at home</title></head><body>
      <nav><a href="/">Zanzibar home</a> <a href="/shop">Quokka shop</a></nav>
      <article><h1>Sourdough at home</h1>${paragraphs.map((p) => `<p>${p}</p>`).join('')}
      <table><tr><th>Flour</th><th>Water</th></tr><tr><td>500 g</td><td>350 g</td></tr></table></article>
      <footer>Copyright Zanzibar Bakery</footer>${extra}</body></html>`;

    it('is cut down to its article, title first, tables kept', async () => {
      const text = await parseDocument(utf8(article()), 'html');
      expect(text).toMatch(/^Sourdough at home\n\nSourdough bread is leavened/);
      for (const p of paragraphs) expect(text).toContain(p);
      expect(text).toMatch(/Flour\s+Water\n500 g\s+350 g/);
      expect(text).not.toMatch(/Zanzibar|Quokka/);
      expect(text.match(/Sourdough at home/g)).toHaveLength(1);
    });

    it('is kept whole when too long to build a DOM of', async () => {
      const padding = `<!--${'x'.repeat(MAX_ARTICLE_SOURCE_CHARS)}-->`;
      const text = await parseDocument(utf8(article(padding)), 'html');
      expect(text).toContain('Zanzibar home');
      expect(text).toContain(paragraphs[2]);
    });
  });

  it('keeps all the text of a page that is not an article', async () => {
    const html = `<html><body><nav><a href="/">Home</a> <a href="/faq">FAQ</a></nav>
      <h2>Opening hours</h2><ul><li>Monday 9-17</li><li>Tuesday 9-17</li></ul>
      <footer>Call us</footer></body></html>`;
    const text = await parseDocument(utf8(html), 'html');
    for (const part of ['Home', 'FAQ', 'Opening hours', 'Monday 9-17', 'Tuesday 9-17', 'Call us']) {
      expect(text).toContain(part);
    }
  });

  it('reads a Latin-1 page that is not valid UTF-8', async () => {
    const bytes = new Uint8Array(Buffer.from('<meta charset="iso-8859-1"><p>Caf\xe9</p>', 'latin1'));
    expect(await parseDocument(bytes, 'html')).toBe('Café');
  });
});

describe('PDF', () => {
  it('extracts the text of every page', async () => {
    const text = await parseDocument(fixture('sample.pdf'), 'pdf');
    expect(text).toBe(
      'Quarterly report for Acme Corporation\nRevenue grew by twelve percent.\n\nSecond page: the outlook (2025) is stable.',
    );
  });

  it('refuses a corrupt or truncated file', async () => {
    expect(await parseError(utf8('%PDF-1.4 this is not really a PDF'), 'pdf')).toMatch(
      /^The PDF could not be read: /,
    );
    expect(await parseError(fixture('sample.pdf').slice(0, 400), 'pdf')).toMatch(
      /^The PDF could not be read: /,
    );
  });
});

describe('DOCX', () => {
  it('extracts the paragraphs', async () => {
    const text = await parseDocument(fixture('sample.docx'), 'docx');
    expect(text.trim()).toBe(
      'Employee handbook\n\nHolidays are booked through the portal & approved by a manager.',
    );
  });

  it('refuses a file that is not a zip, a truncated one, and a zip without a document', async () => {
    expect(await parseError(utf8('PK but not a zip'), 'docx')).toBe(
      'The Word document could not be read: it is not a valid .docx file',
    );
    expect(await parseError(fixture('sample.docx').slice(0, 300), 'docx')).toMatch(
      /^The Word document could not be read: /,
    );
    expect(await parseError(zipOf('hello.txt', 'hi'), 'docx')).toMatch(
      /^The Word document could not be read: /,
    );
  });
});

/** A valid zip holding one file (a DOCX without any Word part). */
function zipOf(name: string, content: string): Uint8Array {
  const data = Buffer.from(content);
  const packed = deflateRawSync(data);
  const nameBytes = Buffer.from(name);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(crc32(data), 14);
  local.writeUInt32LE(packed.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(nameBytes.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(crc32(data), 16);
  central.writeUInt32LE(packed.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(nameBytes.length, 28);
  const localSize = local.length + nameBytes.length + packed.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + nameBytes.length, 12);
  end.writeUInt32LE(localSize, 16);
  return new Uint8Array(Buffer.concat([local, nameBytes, packed, central, nameBytes, end]));
}
