/**
 * ESLint rule: no regular expression built from input. A pattern assembled from what a caller or a site
 * sent can backtrack for seconds on one request (a robots.txt rule once did). It reports
 *   - `new RegExp(x)` and `RegExp(x)` whose pattern is not a literal, and
 *   - `text.match(x)`, `text.matchAll(x)` and `text.search(x)` with a string `x` that is not a literal
 *     (JavaScript turns it into a regular expression), when type information is at hand,
 * except at the reviewed sites named in the options: `{ file, within, why }`, `within` being the
 * innermost named function (or the constant) holding the call, `why` what keeps its input harmless.
 */
import path from 'node:path';
import ts from 'typescript';

const STRING_MATCHERS = new Set(['match', 'matchAll', 'search']);

const isLiteral = (node) => node === undefined || node.type === 'Literal' || (node.type === 'TemplateLiteral' && node.expressions.length === 0);

function nameOf(node) {
  if (!node) return undefined;
  if (node.type === 'Identifier') return node.name;
  if (node.type === 'Literal') return String(node.value);
  return undefined;
}

/** The innermost named function around `node`, else the constant it initialises. */
function within(ancestors) {
  for (let index = ancestors.length - 1; index >= 0; index--) {
    const node = ancestors[index];
    if (node.type === 'FunctionDeclaration') return nameOf(node.id) ?? '(anonymous)';
    if (node.type === 'FunctionExpression' || node.type === 'ArrowFunctionExpression') {
      const parent = ancestors[index - 1];
      if (parent?.type === 'VariableDeclarator') return nameOf(parent.id) ?? '(anonymous)';
      if (parent?.type === 'MethodDefinition' || parent?.type === 'Property' || parent?.type === 'PropertyDefinition') return nameOf(parent.key) ?? '(anonymous)';
      if (node.id) return nameOf(node.id);
    }
  }
  for (const node of ancestors) if (node.type === 'VariableDeclarator') return nameOf(node.id);
  return '(module)';
}

export const regexpFromInput = {
  meta: {
    type: 'problem',
    docs: { description: 'No regular expression built from input (it can backtrack); reviewed sites are listed.' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          reviewed: {
            type: 'array',
            items: { type: 'object', properties: { file: { type: 'string' }, within: { type: 'string' }, why: { type: 'string' } }, required: ['file', 'within', 'why'], additionalProperties: false },
          },
        },
        additionalProperties: false,
      },
    ],
    messages: {
      built: 'A regular expression built from {{what}} ({{file}}, in {{within}}) may backtrack on hostile input: match without one, or escape the input and add this site to the reviewed list in eslint.config.mjs.',
    },
  },
  create(context) {
    const options = context.options[0] ?? {};
    const root = options.root ?? context.cwd;
    const file = path.relative(root, context.filename).split(path.sep).join('/');
    const reviewed = (options.reviewed ?? []).filter((site) => site.file === file);
    const services = context.sourceCode.parserServices;
    const checker = services?.program ? services.program.getTypeChecker() : undefined;

    const report = (node, what) => {
      const where = within(context.sourceCode.getAncestors(node));
      if (reviewed.some((site) => site.within === where)) return;
      context.report({ node, messageId: 'built', data: { what, file, within: where } });
    };
    const isString = (node) => {
      const type = checker.getTypeAtLocation(services.esTreeNodeToTSNodeMap.get(node));
      const parts = type.isUnion() ? type.types : [type];
      return parts.some((part) => (part.flags & ts.TypeFlags.StringLike) !== 0);
    };

    return {
      'NewExpression[callee.name="RegExp"], CallExpression[callee.name="RegExp"]'(node) {
        if (!isLiteral(node.arguments[0])) report(node, 'a pattern that is not a literal');
      },
      CallExpression(node) {
        if (!checker || node.callee.type !== 'MemberExpression' || node.callee.computed) return;
        if (!STRING_MATCHERS.has(node.callee.property.name)) return;
        const argument = node.arguments[0];
        if (isLiteral(argument) || argument.type === 'SpreadElement') return;
        if (isString(node.callee.object) && isString(argument)) report(node, `a string handed to .${node.callee.property.name}()`);
      },
    };
  },
};

export default { rules: { 'regexp-from-input': regexpFromInput } };
