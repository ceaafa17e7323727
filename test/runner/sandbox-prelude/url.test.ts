// runner/sandbox/prelude/url.ts: URLs are parsed and edited by the host's WHATWG parser (their parts cross
// the bridge as JSON), query strings here, and a URL's searchParams stay tied to it both ways.
import { describe, expect, it } from 'vitest';
import { sandbox } from './sandbox.ts';

const { value } = sandbox();

describe('prelude: URL and URLSearchParams', () => {
  it('keeps a URL and its searchParams in step, both ways', async () => {
    const result = await value(`const url = new URL('https://example.com/p?a=1');
      const params = url.searchParams;
      params.set('b', 'x y');
      const afterSet = url.search;
      url.search = '?c=3';
      return [afterSet, params.get('c'), params.has('a'), url.searchParams === params, url.toString(), JSON.stringify(url)]`);
    expect(result).toEqual([
      '?a=1&b=x+y',
      '3',
      false,
      true,
      'https://example.com/p?c=3',
      '"https://example.com/p?c=3"',
    ]);
  });

  it('sets URL parts through the host parser and ignores what it refuses', async () => {
    const result = await value(`const url = new URL('http://a.example/x');
      url.protocol = 'https';
      url.port = '8443';
      url.pathname = '/ä b';
      url.hostname = 'bad host';
      let relative = new URL('../up?q', 'https://h.example/a/b/c').href;
      return [url.href, relative, URL.canParse('nope'), URL.canParse('/p', 'https://h.example')]`);
    expect(result).toEqual(['https://a.example:8443/%C3%A4%20b', 'https://h.example/a/up?q', false, true]);
  });

  it('decodes and encodes form data as browsers do', async () => {
    const result = await value(`const params = new URLSearchParams('a=%41%zz&b=1+2&&c&d=%E2%82%AC');
      const pairs = [...params];
      params.delete('a');
      params.append('e', "!'()~ *");
      return [pairs, params.toString(), params.size, new URLSearchParams([['k', 'v']]).toString()]`);
    expect(result).toEqual([
      [
        ['a', 'A%zz'],
        ['b', '1 2'],
        ['c', ''],
        ['d', '€'],
      ],
      'b=1+2&c=&d=%E2%82%AC&e=%21%27%28%29%7E+*',
      4,
      'k=v',
    ]);
  });
});
