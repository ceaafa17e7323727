// A fast path for condition expressions that are plain comparisons over workflow data, such as
// `"Hello, Ada!".length > 12` or `inputs.count >= 3 && blocks.check.ok`. They are evaluated here,
// without a trip to the sandbox pool, by an interpreter that knows only data: literals, the scope's
// variables, own properties and `length`, and operators over primitives. It calls nothing, loops
// nowhere and reaches no prototype, so it cannot escape or hang. Anything else (calls, `new`,
// regexes, escapes in strings…) answers null, and the expression goes to the sandbox as before.
import jsep from 'jsep';

type Node = jsep.Expression;
type Value = unknown;

const FALLBACK = Symbol('fallback');

const BINARY: Record<string, (a: Value, b: Value) => Value> = {
  '===': (a, b) => a === b,
  '!==': (a, b) => a !== b,
  // biome-ignore lint/suspicious/noDoubleEquals: the expression's own loose equality, over primitives only
  '==': (a, b) => a == b,
  // biome-ignore lint/suspicious/noDoubleEquals: as above
  '!=': (a, b) => a != b,
  '<': (a, b) => (a as number) < (b as number),
  '>': (a, b) => (a as number) > (b as number),
  '<=': (a, b) => (a as number) <= (b as number),
  '>=': (a, b) => (a as number) >= (b as number),
  '+': (a, b) => (a as number) + (b as number),
  '-': (a, b) => (a as number) - (b as number),
  '*': (a, b) => (a as number) * (b as number),
  '/': (a, b) => (a as number) / (b as number),
  '%': (a, b) => (a as number) % (b as number),
};

const isPrimitive = (v: Value) => v === null || (typeof v !== 'object' && typeof v !== 'function');

/** The expression's value, or null when it is not a plain data expression this path handles. */
export function evaluateDataExpression(
  expression: string,
  scope: Record<string, unknown>,
): { value: unknown } | null {
  // jsep reads string escapes differently from JavaScript (\u…): leave those to the sandbox.
  if (expression.includes('\\') || expression.length > 2000) return null;
  let ast: Node;
  try {
    ast = jsep(expression);
  } catch {
    return null;
  }
  const value = evaluate(ast, scope);
  return value === FALLBACK ? null : { value };
}

function evaluate(node: Node, scope: Record<string, unknown>): Value {
  switch (node.type) {
    case 'Literal':
      return (node as jsep.Literal).value;
    case 'Identifier': {
      const name = (node as jsep.Identifier).name;
      if (name === 'undefined') return undefined;
      return Object.hasOwn(scope, name) ? scope[name] : FALLBACK;
    }
    case 'MemberExpression': {
      const m = node as jsep.MemberExpression;
      const object = evaluate(m.object, scope);
      if (object === FALLBACK || object === null || object === undefined) return FALLBACK;
      const key = m.computed ? evaluate(m.property, scope) : (m.property as jsep.Identifier).name;
      if (typeof key !== 'string' && typeof key !== 'number') return FALLBACK;
      if (key === 'length' && (typeof object === 'string' || Array.isArray(object))) return object.length;
      if (typeof object !== 'object' || !Object.hasOwn(object, key)) return FALLBACK;
      return (object as Record<string | number, unknown>)[key];
    }
    case 'UnaryExpression': {
      const u = node as jsep.UnaryExpression;
      const arg = evaluate(u.argument, scope);
      if (arg === FALLBACK || !isPrimitive(arg)) return FALLBACK;
      if (u.operator === '!') return !arg;
      if (u.operator === '-') return -(arg as number);
      if (u.operator === '+') return +(arg as number);
      return FALLBACK;
    }
    case 'BinaryExpression': {
      const b = node as jsep.BinaryExpression;
      const left = evaluate(b.left, scope);
      if (left === FALLBACK) return FALLBACK;
      // Logical operators short-circuit, as in JavaScript.
      if (b.operator === '&&') return left ? evaluate(b.right, scope) : left;
      if (b.operator === '||') return left ? left : evaluate(b.right, scope);
      if (b.operator === '??') return left ?? evaluate(b.right, scope);
      const right = evaluate(b.right, scope);
      const op = BINARY[b.operator];
      if (right === FALLBACK || !op) return FALLBACK;
      // Objects would run their own toString/valueOf: only identity comparison is taken over them.
      if ((!isPrimitive(left) || !isPrimitive(right)) && b.operator !== '===' && b.operator !== '!==')
        return FALLBACK;
      return op(left, right);
    }
    case 'ConditionalExpression': {
      const c = node as jsep.ConditionalExpression;
      const test = evaluate(c.test, scope);
      if (test === FALLBACK) return FALLBACK;
      return evaluate(test ? c.consequent : c.alternate, scope);
    }
    default:
      return FALLBACK;
  }
}
