/**
 * JMESPath queries with bounds: the one way a config reads a JSON answer (docs/config-language.md, "Reading a JSON
 * API"). The language is JMESPath as the JMESPath Community specification defines it (https://jmespath.site, the
 * JEP process), run by @jmespath-community/jmespath (1.3.0, pinned); nothing here is a path syntax of our own.
 *
 * What is added, because a config and an answer are both hostile input (docs/architecture.md; docs/limits.md):
 * - at validation ({@link compileQuery}): at most {@link QUERY_LIMITS}.maxChars characters and maxNodes syntax nodes;
 *   `let` expressions and `$variables` are refused (their scopes would run outside the bounded interpreter), and so
 *   is a function the library does not know, with the known ones named;
 * - at evaluation ({@link QueryBudget}): every step of the interpreter is counted against a budget shared by all the
 *   queries of one answer, every array it makes counts its length against another, a string it makes may not pass
 *   maxString characters, and the answer's queries together have a wall-clock deadline; the functions whose result
 *   could be far larger than their inputs (`pad_left`, `pad_right`, `replace`, `join`, `to_string`) have their
 *   result's size checked before they run. Crossing any bound throws {@link QueryLimitError}
 *   (`api_query_limit`), never a hang or an out-of-memory.
 * A JSON value the queries run on is checked for depth first (../api/api-source.ts, `parseAnswer`), so that the
 * library's recursive comparisons and our own serialisation stay within the stack.
 */
import { compile, getRegisteredFunctions, TreeInterpreter } from '@jmespath-community/jmespath';
import { CodedError } from '../../errors.ts';

/** A JSON value (what JSON.parse gives). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** The bounds of queries (docs/limits.md). */
export const QUERY_LIMITS = {
  /** Longest query, characters. */
  maxChars: 1000,
  /** Most syntax nodes in one query. */
  maxNodes: 300,
  /** Interpreter steps for all the queries of one answer (each record's fields included). */
  maxSteps: 20_000_000,
  /** Array elements made, all queries of one answer together. */
  maxCells: 20_000_000,
  /** Longest array one step may make. */
  maxArray: 1_000_000,
  /** Longest string one step (or a function) may make, characters. */
  maxString: 2_000_000,
  /** Wall-clock time of all the queries of one answer, ms. */
  deadlineMs: 10_000,
} as const;

/** A query that crossed a bound of {@link QUERY_LIMITS}: code `api_query_limit`, details `[{query, limit}]`. */
export class QueryLimitError extends CodedError {
  constructor(query: string, limit: string) {
    super('api_query_limit', `The JMESPath query "${query.slice(0, 200)}" passed its bound (${limit}) on the API's answer; a query may take at most ${QUERY_LIMITS.maxSteps.toLocaleString('en-US')} steps and ${QUERY_LIMITS.deadlineMs / 1000} s per answer and make no string over ${QUERY_LIMITS.maxString.toLocaleString('en-US')} characters`, [{ query: query.slice(0, 200), limit }]);
    this.name = 'QueryLimitError';
  }
}

/** The syntax tree of a query, as the library gives it. */
type Node = ReturnType<typeof compile>;

/** A compiled query: its text (for messages) and its syntax tree. */
export interface CompiledQuery {
  readonly text: string;
  readonly ast: Node;
}

const KNOWN_FUNCTIONS = new Set(getRegisteredFunctions());

/** Walks a syntax tree, calling `visit` on every node (iteratively: a tree from a bounded text is small anyway). */
function walk(ast: Node, visit: (node: { type: string; name?: string }) => void): void {
  const stack: unknown[] = [ast];
  while (stack.length) {
    const n = stack.pop();
    if (Array.isArray(n)) {
      stack.push(...n);
      continue;
    }
    if (!n || typeof n !== 'object') continue;
    const node = n as { type?: unknown };
    if (typeof node.type !== 'string') continue;
    visit(node as { type: string; name?: string });
    for (const [key, v] of Object.entries(node)) if (!(node.type === 'Literal' && key === 'value') && v && typeof v === 'object') stack.push(v);
  }
}

/**
 * Compiles a query for use with {@link runQuery}.
 * @throws Error with a message for people: the library's syntax error (with its position), a query too long or too
 *   large, `let`/`$variables`, an unknown function (the known ones listed).
 */
export function compileQuery(text: string): CompiledQuery {
  if (text.length > QUERY_LIMITS.maxChars) throw new Error(`a JMESPath query may be at most ${QUERY_LIMITS.maxChars} characters; this one has ${text.length}`);
  let ast: Node;
  try {
    ast = compile(text);
  } catch (err) {
    throw new Error(`invalid JMESPath query "${text}": ${(err as Error).message}`);
  }
  let nodes = 0;
  walk(ast, (node) => {
    nodes++;
    if (node.type === 'LetExpression' || node.type === 'Variable' || node.type === 'Binding') throw new Error(`JMESPath query "${text}": let expressions and $variables are not supported here`);
    if (node.type === 'Function' && node.name !== undefined && !KNOWN_FUNCTIONS.has(node.name)) {
      throw new Error(`JMESPath query "${text}": unknown function ${node.name}(); known: ${[...KNOWN_FUNCTIONS].sort().join(', ')}`);
    }
  });
  if (nodes > QUERY_LIMITS.maxNodes) throw new Error(`JMESPath query "${text}" has ${nodes} syntax nodes; at most ${QUERY_LIMITS.maxNodes}`);
  return { text, ast };
}

/**
 * The budget of the queries of one answer: steps, array cells and a deadline, shared by every {@link runQuery} call
 * made with it. Make one per answer.
 */
export class QueryBudget {
  steps = 0;
  cells = 0;
  readonly deadline: number;
  constructor(now = Date.now()) {
    this.deadline = now + QUERY_LIMITS.deadlineMs;
  }
}

interface InterpreterLike {
  runtime: { callFunction(name: string, args: unknown[]): unknown };
  search(node: Node, value: unknown): unknown;
  visit(node: Node, value: unknown): unknown;
}

/** The library's interpreter class (it exports an instance; its constructor makes a fresh one with its own runtime). */
const Interpreter = (TreeInterpreter as unknown as { constructor: new () => InterpreterLike }).constructor;

/** A rough upper bound of JSON.stringify's length of a value, counting at most `cap` (stops early). */
function serialisedAtMost(value: unknown, cap: number): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length && n <= cap) {
    const v = stack.pop();
    if (typeof v === 'string') n += v.length + 2;
    else if (Array.isArray(v)) {
      n += 2 + v.length;
      for (const x of v) stack.push(x);
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        n += k.length + 4;
        stack.push(x);
      }
      n += 2;
    } else n += 8;
  }
  return n;
}

/** The interpreter of one query run: counts its steps and checks what it makes. */
class BoundedInterpreter extends Interpreter {
  private budget: QueryBudget = new QueryBudget();
  private query = '';

  constructor() {
    super();
    const call = this.runtime.callFunction.bind(this.runtime);
    this.runtime.callFunction = (name: string, args: unknown[]) => {
      this.checkCall(name, args);
      const out = call(name, args);
      this.checkResult(out);
      return out;
    };
  }

  run(query: CompiledQuery, value: unknown, budget: QueryBudget): unknown {
    this.budget = budget;
    this.query = query.text;
    return this.search(query.ast, value);
  }

  private fail(limit: string): never {
    throw new QueryLimitError(this.query, limit);
  }

  override visit(node: Node, value: unknown): unknown {
    const b = this.budget;
    if (++b.steps > QUERY_LIMITS.maxSteps) this.fail(`${QUERY_LIMITS.maxSteps} steps`);
    if ((b.steps & 4095) === 0 && Date.now() > b.deadline) this.fail(`${QUERY_LIMITS.deadlineMs} ms`);
    const out = super.visit(node, value);
    this.checkResult(out);
    return out;
  }

  private checkResult(out: unknown): void {
    if (Array.isArray(out)) {
      if (out.length > QUERY_LIMITS.maxArray) this.fail(`an array of ${out.length} elements`);
      this.budget.cells += out.length;
      if (this.budget.cells > QUERY_LIMITS.maxCells) this.fail(`${QUERY_LIMITS.maxCells} array elements`);
    } else if (typeof out === 'string' && out.length > QUERY_LIMITS.maxString) {
      this.fail(`a string of ${out.length} characters`);
    }
  }

  /** The functions whose result may be much larger than their arguments: their size is checked before they run. */
  private checkCall(name: string, args: unknown[]): void {
    const max = QUERY_LIMITS.maxString;
    const len = (v: unknown) => (typeof v === 'string' ? v.length : 0);
    switch (name) {
      case 'pad_left':
      case 'pad_right':
        if (typeof args[1] === 'number' && args[1] > max) this.fail(`${name}() to ${args[1]} characters`);
        break;
      case 'replace': {
        const subject = len(args[0]);
        const estimate = subject + (subject / Math.max(1, len(args[1])) + 1) * len(args[2]);
        if (estimate > max) this.fail(`replace() making up to ${Math.round(estimate)} characters`);
        break;
      }
      case 'join': {
        const items = Array.isArray(args[1]) ? args[1] : [];
        let total = len(args[0]) * items.length;
        for (const x of items) total += len(x);
        if (total > max) this.fail(`join() making ${total} characters`);
        break;
      }
      case 'to_string':
        if (typeof args[0] !== 'string' && serialisedAtMost(args[0], max) > max) this.fail(`to_string() of a value over ${max} characters`);
        break;
      default:
    }
  }
}

/** One interpreter per thread is enough: a run reads its answers one query at a time (JavaScript is single-threaded). */
let interpreter: BoundedInterpreter | null = null;

/**
 * Runs a compiled query on a JSON value under `budget`.
 * @returns the query's result (JSON; `null` where JMESPath gives nothing).
 * @throws QueryLimitError (`api_query_limit`) past a bound; Error for a runtime type error of the query (a function
 *   given the wrong type: the library's message).
 */
export function runQuery(query: CompiledQuery, value: JsonValue, budget: QueryBudget): JsonValue {
  interpreter ??= new BoundedInterpreter();
  try {
    return (interpreter.run(query, value, budget) ?? null) as JsonValue;
  } catch (err) {
    if (err instanceof QueryLimitError) throw err;
    if (err instanceof RangeError) throw new QueryLimitError(query.text, 'the stack or the largest string');
    throw new Error(`JMESPath query "${query.text}": ${(err as Error).message}`);
  }
}
