// The condition fast path: plain data expressions give exactly JavaScript's answers, and anything
// that could run code or reach a prototype is handed to the sandbox (null) instead.
import { expect, it } from 'vitest';
import { evaluateDataExpression } from '../../runner/executor/expression.ts';

const scope = {
  inputs: { name: 'Ada', count: 3, tags: ['a', 'b'], nested: { ok: true }, zero: 0 },
  blocks: { greet: { message: 'Hello, Ada!' } },
  loop: { item: 2, index: 1 },
};

it.each([
  '"Hello, Ada!".length > 12',
  'inputs.count >= 3 && blocks.greet.message === "Hello, Ada!"',
  'inputs.tags.length == 2',
  'inputs.tags[1] === "b"',
  'inputs["name"] + "!" === "Ada!"',
  '!inputs.nested.ok || inputs.zero',
  'inputs.zero ?? 5',
  'inputs.count % 2 === 1 ? "odd" : "even"',
  '-inputs.count < 0',
  'loop.item * loop.index + 1',
  'null == undefined',
  '1 + "1"',
  'true',
])('evaluates %s as JavaScript does', (expression) => {
  const { inputs, blocks, loop } = scope;
  const expected = new Function('inputs', 'blocks', 'loop', `return (${expression});`)(inputs, blocks, loop);
  expect(evaluateDataExpression(expression, scope)).toEqual({ value: expected });
});

it.each([
  'inputs.name.toUpperCase() === "ADA"',
  'inputs.constructor',
  'inputs.__proto__',
  'inputs.tags.constructor.constructor("return process")()',
  'this.process',
  'globalThis',
  'process.env',
  'new Date()',
  '/ab/.test(inputs.name)',
  'inputs.nested + 1',
  'inputs.nested == "[object Object]"',
  '"caf\\u00e9".length',
  'inputs.missing.deeper',
  'typeof inputs',
  'inputs.count = 4',
  '(',
])('hands %s to the sandbox', (expression) => {
  expect(evaluateDataExpression(expression, scope)).toBeNull();
});
