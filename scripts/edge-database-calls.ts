/**
 * Lint rule: the edges make no database call. Routes (api/) and activities (activities/) validate,
 * call a core command and present or heartbeat. ESLint's import rule keeps the driver and the store
 * modules out of both; this check, with the type checker, also catches a database call made with what
 * core hands out. A call counts when it is
 *   - a method declared by the MongoDB driver (a collection, cursor or database method), or
 *   - a function that hands out a `Collection` (a collection helper: `xCollections(db)`), or
 *   - the opening of a store in an edge (`new X(db)`, X a class holding a `Collection`), or a method
 *     called on a store opened so.
 * Calls of what core builds and hands in (ApiDeps, ActivityDeps: the accounts, the commands) are core's own.
 * `npm test` runs it after ESLint; it prints every such call and exits non-zero when it finds one.
 *
 *   npx tsx scripts/edge-database-calls.ts
 */
import path from 'node:path';
import ts from 'typescript';
import { PROJECT_ROOT } from '../base/config';

const EDGES = ['api', 'activities'].map((folder) => path.join(PROJECT_ROOT, folder) + path.sep);
const inEdge = (file: string): boolean => EDGES.some((edge) => path.resolve(file).startsWith(edge));
const DRIVER = `${path.sep}node_modules${path.sep}mongodb${path.sep}`;

function program(): ts.Program {
  const configPath = path.join(PROJECT_ROOT, 'tsconfig.json');
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, (file) => ts.sys.readFile(file)).config, ts.sys, PROJECT_ROOT);
  return ts.createProgram(parsed.fileNames.filter(inEdge), parsed.options);
}

const fromDriver = (declaration: ts.Declaration): boolean => declaration.getSourceFile().fileName.includes(DRIVER);

/** Whether `type` is, or directly holds, a driver Collection. */
function holdsCollection(checker: ts.TypeChecker, type: ts.Type, depth = 0): boolean {
  const named = (type.aliasSymbol ?? type.getSymbol())?.getDeclarations() ?? [];
  if (type.getSymbol()?.getName() === 'Collection' && named.some(fromDriver)) return true;
  if (depth > 0) return false;
  if (type.isUnion()) return type.types.some((member) => holdsCollection(checker, member, depth));
  const awaited = checker.getAwaitedType(type);
  if (awaited && awaited !== type) return holdsCollection(checker, awaited, depth);
  return checker.getPropertiesOfType(type).some((property) => {
    const declaration = property.valueDeclaration ?? property.getDeclarations()?.[0];
    return declaration !== undefined && holdsCollection(checker, checker.getTypeOfSymbolAtLocation(property, declaration), depth + 1);
  });
}

/** Whether `expression` opens a store: `new X(...)` of a class holding a driver Collection. */
function opensStore(checker: ts.TypeChecker, expression: ts.Expression | undefined): boolean {
  return expression !== undefined && ts.isNewExpression(expression) && holdsCollection(checker, checker.getTypeAtLocation(expression));
}

/** Why the call (or `new`) is a database call, or undefined. */
function databaseCall(checker: ts.TypeChecker, call: ts.CallExpression | ts.NewExpression): string | undefined {
  if (ts.isNewExpression(call)) return opensStore(checker, call) ? 'the opening of a store' : undefined;
  const signature = checker.getResolvedSignature(call);
  const declaration = signature?.getDeclaration();
  if (declaration && fromDriver(declaration)) return 'a driver method';
  if (signature && holdsCollection(checker, checker.getReturnTypeOfSignature(signature))) return 'a collection helper';
  if (ts.isPropertyAccessExpression(call.expression)) {
    let receiver: ts.Expression = call.expression.expression;
    if (opensStore(checker, receiver)) return 'a method of a store opened in an edge';
    if (ts.isPropertyAccessExpression(receiver) && receiver.expression.kind === ts.SyntaxKind.ThisKeyword) receiver = receiver.name;
    const held = ts.isIdentifier(receiver) ? checker.getSymbolAtLocation(receiver)?.valueDeclaration : undefined;
    const initializer = held && (ts.isVariableDeclaration(held) || ts.isPropertyDeclaration(held)) ? held.initializer : undefined;
    if (opensStore(checker, initializer)) return 'a method of a store opened in an edge';
  }
  return undefined;
}

function edgeDatabaseCalls(): string[] {
  const built = program();
  const checker = built.getTypeChecker();
  const found: string[] = [];
  for (const source of built.getSourceFiles()) {
    if (!inEdge(source.fileName)) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const why = databaseCall(checker, node);
        if (why) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          found.push(`${path.relative(PROJECT_ROOT, source.fileName)}:${line + 1}: ${ts.isNewExpression(node) ? 'new ' : ''}${node.expression.getText(source)}(…) is ${why}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

const found = edgeDatabaseCalls();
for (const line of found) console.error(line);
console.log(`[fetchplane] database calls under api/ and activities/: ${found.length}`);
process.exitCode = found.length > 0 ? 1 : 0;
