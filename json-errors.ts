// Says where JSON text is malformed, for the messages of both planes and the admin CLI: the first
// error, by line and column, as a person would find it in an editor (`Unexpected token } at line 3,
// column 5`). JSON.parse's own messages differ by case (some give a position, some quote the whole
// text, none the line), so the text is scanned again, only once JSON.parse has refused it.

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WORD = /[A-Za-z_$][\w$]*/y;

interface SyntaxProblem {
  offset: number;
  message: string;
  /** What would have been valid there. */
  expected?: string;
}

/** How a character reads in a message: itself, or its code point when it would not show. */
function shown(ch: string): string {
  const code = ch.codePointAt(0) as number;
  const invisible = code <= 0x20 || (code >= 0x7f && code <= 0xa0) || code === 0xfeff;
  return invisible ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}` : ch;
}

/** The token that starts at `i`: a whole word (`undefined`, `NaN`) or one character. */
function tokenAt(text: string, i: number): string {
  WORD.lastIndex = i;
  const word = WORD.exec(text);
  return word ? word[0] : shown(String.fromCodePoint(text.codePointAt(i) as number));
}

/** The first syntax error of `text`, or null when it is valid JSON. Iterative: any depth. */
function firstProblem(text: string): SyntaxProblem | null {
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && WHITESPACE.has(text[i] as string)) i++;
  };
  const unexpected = (expected: string): SyntaxProblem => ({
    offset: i,
    message: i >= text.length ? 'Unexpected end of input' : `Unexpected token ${tokenAt(text, i)}`,
    expected,
  });
  /** Reads a string at `i` (on its opening quote); a problem, or null with `i` past its end. */
  const readString = (): SyntaxProblem | null => {
    const start = i;
    i++;
    while (i < text.length) {
      const ch = text[i] as string;
      if (ch === '"') {
        i++;
        return null;
      }
      if (ch === '\\') {
        const next = text[i + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)))
            return { offset: i, message: 'Bad \\u escape in string', expected: '4 hex digits' };
          i += 6;
        } else if (next !== undefined && ESCAPES.has(next)) i += 2;
        else if (next === undefined) break;
        else return { offset: i, message: `Bad escape \\${shown(next)} in string` };
      } else if (ch.charCodeAt(0) < 0x20) {
        return { offset: i, message: `Unescaped control character ${shown(ch)} in string` };
      } else i++;
    }
    return { offset: start, message: 'Unterminated string' };
  };
  /** Reads a scalar value at `i`, or reports what is there instead of a value. */
  const readScalar = (): SyntaxProblem | null => {
    const ch = text[i];
    if (ch === '"') return readString();
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return null;
      }
    }
    if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) {
      NUMBER.lastIndex = i;
      const number = NUMBER.exec(text);
      if (!number) return { offset: i, message: 'Bad number' };
      i += number[0].length;
      // A number runs on into digits it may not have (a leading zero: 01).
      if (/[0-9.eE+-]/.test(text[i] ?? '')) return { offset: i, message: 'Bad number' };
      return null;
    }
    return unexpected('a value');
  };

  // What the scanner expects next; the stack holds the open containers.
  const stack: ('{' | '[')[] = [];
  let state: 'value' | 'firstValue' | 'key' | 'firstKey' | 'after' = 'value';
  for (;;) {
    skipSpace();
    if (state === 'value' || state === 'firstValue') {
      const ch = text[i];
      if (ch === ']' && state === 'firstValue') {
        stack.pop();
        i++;
        state = 'after';
      } else if (ch === '{' || ch === '[') {
        stack.push(ch);
        i++;
        state = ch === '{' ? 'firstKey' : 'firstValue';
      } else {
        const problem = readScalar();
        if (problem) return problem;
        state = 'after';
      }
    } else if (state === 'key' || state === 'firstKey') {
      if (text[i] === '}' && state === 'firstKey') {
        stack.pop();
        i++;
        state = 'after';
        continue;
      }
      if (text[i] !== '"') return unexpected('a property name in double quotes');
      const problem = readString();
      if (problem) return problem;
      skipSpace();
      if (text[i] !== ':') return unexpected("':' after the property name");
      i++;
      state = 'value';
    } else {
      const open = stack.at(-1);
      if (open === undefined) {
        return i < text.length
          ? {
              offset: i,
              message: `Unexpected token ${tokenAt(text, i)}`,
              expected: 'nothing after the JSON value',
            }
          : null;
      }
      const close = open === '{' ? '}' : ']';
      if (text[i] === ',') {
        i++;
        state = open === '{' ? 'key' : 'value';
      } else if (text[i] === close) {
        stack.pop();
        i++;
      } else return unexpected(`',' or '${close}'`);
    }
  }
}

/** Line and column (both from 1, columns in characters) of an offset in the text. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  const line = before.split('\n').length;
  return { line, column: [...before.slice(lineStart)].length + 1 };
}

/**
 * What is wrong with JSON text, naming where (`Unexpected token } at line 3, column 5: expected a
 * value`); null when the text is valid JSON.
 */
export function jsonSyntaxError(text: string): string | null {
  const problem = firstProblem(text);
  if (!problem) return null;
  const { line, column } = lineAndColumn(text, problem.offset);
  const expected = problem.expected ? `: expected ${problem.expected}` : '';
  return `${problem.message} at line ${line}, column ${column}${expected}`;
}

/** Parses JSON text; a SyntaxError's message names the first error's line and column. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    // JSON.parse refused it: the scanner finds why (its verdict, should the two ever disagree,
    // falls back to JSON.parse's own words).
    throw new SyntaxError(jsonSyntaxError(text) ?? (err as Error).message);
  }
}
