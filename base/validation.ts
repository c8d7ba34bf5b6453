/**
 * Validation of query strings and JSON bodies against JSON Schemas (ajv), outside any HTTP layer: the
 * routes validate with it (api/http/routes.ts), and so do callers that take a surface's parameters
 * without an HTTP request (MCP tools, Batch tasks in the worker). Failures come out as issues, which
 * each surface maps to its own error codes.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { parseBoolean } from './boolean';
import { problem, type ApiError, type ErrorCode } from './errors';

/** Query values as they arrive: a string, repeated values, or nothing. */
export type ParsedQuery = Record<string, string | string[] | undefined>;

export type JsonSchema = Record<string, unknown>;

export interface ObjectSchema extends JsonSchema {
  type: 'object';
  properties: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
}

/** What went wrong with a request, before a surface turns it into its own error code. */
export type ValidationIssue =
  | { kind: 'malformed_body'; message: string }
  | { kind: 'unknown'; where: 'query' | 'body'; field: string }
  | { kind: 'missing'; where: 'query' | 'body'; field: string }
  | { kind: 'invalid'; where: 'query' | 'body'; field: string; message: string };

export type IssueMapper = (issue: ValidationIssue) => ApiError;

/** What a validation failure says, the field named. */
export function issueMessage(issue: ValidationIssue): string {
  switch (issue.kind) {
    case 'malformed_body':
      return issue.message;
    case 'unknown':
      return `Unknown ${issue.where === 'query' ? 'query parameter' : 'field'} "${issue.field}".`;
    case 'missing':
      return `"${issue.field}" is required.`;
    case 'invalid':
      return `"${issue.field}" ${issue.message}.`;
  }
}

/** The default mapping, as the Crawl surface spells its codes. */
export const defaultIssues: IssueMapper = (issue) => {
  const code = { malformed_body: 'invalid_request', unknown: 'unknown_parameter', missing: 'invalid_parameter', invalid: 'invalid_parameter' } as const;
  return problem(code[issue.kind], issueMessage(issue));
};

/** Every failure as one code (Batch and Extract spell them so), with extra members such as a `reason`. */
export const issuesAs =
  (code: ErrorCode, members: (issue: ValidationIssue) => Record<string, unknown> = () => ({})): IssueMapper =>
  (issue) =>
    problem(code, issueMessage(issue), { members: members(issue) });

const ajv = new Ajv2020({ allErrors: false, strict: true, useDefaults: false });
addFormats(ajv);

/** A schema compiled once by the shared validator. */
export const compileSchema = (schema: JsonSchema): ValidateFunction => ajv.compile(schema);

/** Query values arrive as strings; this turns them into what the schema declares, or says why not. */
export function coerceQuery(
  schema: ObjectSchema,
  query: ParsedQuery,
): { value: Record<string, unknown> } | { issue: ValidationIssue } {
  const value: Record<string, unknown> = {};
  for (const [name, given] of Object.entries(query)) {
    if (given === undefined) continue;
    // Own properties only: `__proto__` or `constructor` are unknown parameters, not Object's members.
    const property = Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    if (!property) {
      if (schema.additionalProperties === false) return { issue: { kind: 'unknown', where: 'query', field: name } };
      value[name] = given;
      continue;
    }
    if (Array.isArray(given)) {
      return { issue: { kind: 'invalid', where: 'query', field: name, message: 'is given more than once' } };
    }
    const coerced = coerceScalar(property.type, given);
    if (coerced === invalidScalar) {
      return { issue: { kind: 'invalid', where: 'query', field: name, message: `must be ${describeType(property.type)}` } };
    }
    value[name] = coerced;
  }
  return { value };
}

const invalidScalar = Symbol('invalid');

function coerceScalar(type: unknown, raw: string): unknown {
  switch (type) {
    case 'boolean':
      return parseBoolean(raw) ?? invalidScalar;
    case 'integer':
      return /^-?\d{1,15}$/.test(raw.trim()) ? Number(raw) : invalidScalar;
    case 'number':
      return raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : invalidScalar;
    default:
      return raw;
  }
}

const describeType = (type: unknown): string =>
  type === 'boolean' ? 'true or false' : type === 'integer' ? 'an integer' : type === 'number' ? 'a number' : 'a string';

export function issueFrom(where: 'query' | 'body', error: ErrorObject | undefined): ValidationIssue {
  const base = error?.instancePath.replace(/^\//, '').replace(/\//g, '.') ?? '';
  const field = (name: string) => (base ? `${base}.${name}` : name);
  if (error?.keyword === 'additionalProperties') {
    return { kind: 'unknown', where, field: field(String(error.params.additionalProperty)) };
  }
  if (error?.keyword === 'required') {
    return { kind: 'missing', where, field: field(String(error.params.missingProperty)) };
  }
  return { kind: 'invalid', where, field: base || '(body)', message: error?.message ?? 'is invalid' };
}

/**
 * A query validated the way a route validates it (strings coerced to the declared types), for callers
 * that reuse a route's parameters without an HTTP request (the MCP tools).
 */
export function checkQuery(schema: ObjectSchema, query: ParsedQuery, issues: IssueMapper = defaultIssues): Record<string, unknown> {
  const coerced = coerceQuery(schema, query);
  if ('issue' in coerced) throw issues(coerced.issue);
  const validate = ajv.compile(schema);
  if (!validate(coerced.value)) throw issues(issueFrom('query', validate.errors?.[0]));
  return coerced.value;
}

/** A JSON body validated the way a route validates it. */
export function checkBody(schema: ObjectSchema, value: unknown, issues: IssueMapper = defaultIssues): Record<string, unknown> {
  const validate = ajv.compile(schema);
  if (!validate(value)) throw issues(issueFrom('body', validate.errors?.[0]));
  return value as Record<string, unknown>;
}
