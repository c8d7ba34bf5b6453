/**
 * The lint rule that keeps regular expressions built from input out of the code
 * (scripts/lint/regexp-from-input.mjs), run with the project's own ESLint configuration.
 */
import path from 'node:path';
import { expect } from 'chai';
import { ESLint } from 'eslint';

const ROOT = path.resolve(__dirname, '../../..');
const RULE = 'fetchplane/regexp-from-input';

let eslint: ESLint | undefined;

/** The rule's messages for `code` linted as if it were `file` (an existing file of the project, for its types). */
async function problems(code: string, file: string): Promise<string[]> {
  eslint ??= new ESLint({ cwd: ROOT });
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  const fatal = result?.messages.find((message) => message.fatal);
  if (fatal) throw new Error(fatal.message);
  return (result?.messages ?? []).filter((message) => message.ruleId === RULE).map((message) => message.message);
}

describe('lint: no regular expression built from input', function () {
  this.timeout(60_000);

  it('refuses a pattern compiled from a robots.txt rule, as the matcher once did', async () => {
    const code = [
      'export function ruleOf(raw: string): RegExp {',
      "  const source = raw.split('*').map((part) => part.replace(/[.+?^${}()|[\\]\\\\]/g, '\\\\$&')).join('.*');",
      "  return new RegExp(`^${source}`, 's');",
      '}',
      '',
    ].join('\n');
    const found = await problems(code, 'engine/robots/parse.ts');
    expect(found).to.have.length(1);
    expect(found[0]).to.contain('in ruleOf');
  });

  it('refuses a string handed to match, matchAll or search, and RegExp called without new', async () => {
    const code = [
      'export const a = (text: string, input: string): boolean => text.search(input) >= 0;',
      'export const b = (text: string, input: string): number => [...text.matchAll(input)].length;',
      'export const c = (text: string, input: string): boolean => text.match(input) !== null;',
      'export const d = (input: string): RegExp => RegExp(input);',
      "export const fine = (text: string): boolean => text.search(/x+/) >= 0 && text.match('y') !== null && new RegExp('^z$').test(text) && new RegExp(`q`).test(text);",
      '',
    ].join('\n');
    const found = await problems(code, 'engine/robots/parse.ts');
    expect(found.map((message) => /in (\w+)/.exec(message)?.[1])).to.deep.equal(['a', 'b', 'c', 'd']);
  });

  it('lets the reviewed sites be, and only them', async () => {
    const reviewed = "export const wholeNumber = (part: string, digits = 9): boolean => new RegExp(`^\\\\d{0,${digits}}$`).test(part);\n";
    expect(await problems(reviewed, 'core/jobs/cursor.ts')).to.deep.equal([]);
    expect(await problems(reviewed, 'base/ids.ts')).to.have.length(1);
  });
});
