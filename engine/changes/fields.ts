/**
 * Structured outputs (`css_extractor`, `extract`, `autoparse` results) compared field by field.
 *
 * Objects are walked into dotted names (`offers.price`; a `.` or `\` inside a key is escaped with a
 * backslash); arrays of objects by index (`items.2.price`); arrays of plain values, strings, numbers,
 * booleans and null are leaves compared whole. Strings compare by their keys, as page text does, so a
 * field holding a generation time or a token does not change with it; what is reported are the
 * values as they were. Depth and field count are bounded: past them a subtree is one leaf.
 */
import type { FieldChange, MaskedValue } from './types';
import { maskLine } from './volatile';

export const MAX_FIELD_DEPTH = 32;
export const MAX_FIELDS = 10_000;

interface Leaf {
  /** What is compared. */
  key: string;
  value: unknown;
  masked: readonly MaskedValue[];
}

const escapeName = (name: string): string => (name.includes('.') || name.includes('\\') ? name.replace(/[\\.]/g, '\\$&') : name);

const isPlain = (value: unknown): boolean => value === null || typeof value !== 'object';

/** Leaves of a structured output by dotted name, in document order. */
function flatten(root: unknown): Map<string, Leaf> {
  const leaves = new Map<string, Leaf>();
  const stack: Array<{ path: string; value: unknown; depth: number }> = [{ path: '', value: root, depth: 0 }];
  while (stack.length > 0) {
    const { path, value, depth } = stack.pop() as { path: string; value: unknown; depth: number };
    const entries = childrenOf(value);
    // An empty output has no fields (a version without one compares as all fields new).
    if (path === '' && entries?.length === 0) continue;
    if (entries === undefined || entries.length === 0 || depth >= MAX_FIELD_DEPTH || leaves.size + stack.length >= MAX_FIELDS) {
      leaves.set(path, leafOf(value));
      continue;
    }
    // Pushed in reverse so they come off the stack in order.
    for (let k = entries.length - 1; k >= 0; k--) {
      const [name, child] = entries[k] as [string, unknown];
      stack.push({ path: path === '' ? name : `${path}.${name}`, value: child, depth: depth + 1 });
    }
  }
  return leaves;
}

/** The named children of an object or of an array holding objects; undefined for a leaf. */
function childrenOf(value: unknown): Array<[string, unknown]> | undefined {
  if (isPlain(value)) return undefined;
  if (Array.isArray(value)) {
    if (value.every(isPlain)) return undefined;
    return value.map((item, index) => [String(index), item]);
  }
  return Object.entries(value as Record<string, unknown>).map(([name, child]) => [escapeName(name), child]);
}

function leafOf(value: unknown): Leaf {
  if (typeof value === 'string') {
    const { key, values } = maskLine(value);
    return { key: `s${key}`, value, masked: values };
  }
  if (Array.isArray(value) || (value !== null && typeof value === 'object')) {
    const { key, values } = maskLine(JSON.stringify(value) ?? 'null');
    return { key: `j${key}`, value, masked: values };
  }
  return { key: `p${String(value)}`, value, masked: [] };
}

export interface FieldDiff {
  changes: Record<string, FieldChange>;
  /** Masked runs that differed inside fields that compared equal. */
  ignored: MaskedValue[];
}

/** Fields whose compared values differ between two structured outputs (absent on one side: `null`). */
export function diffFields(previous: unknown, current: unknown): FieldDiff {
  const before = flatten(previous ?? {});
  const after = flatten(current ?? {});
  const changes: Record<string, FieldChange> = {};
  const ignored: MaskedValue[] = [];
  const name = (path: string): string => (path === '' ? '.' : path);
  for (const [path, leaf] of after) {
    const old = before.get(path);
    if (old === undefined) changes[name(path)] = { previous: null, current: leaf.value };
    else if (old.key !== leaf.key) changes[name(path)] = { previous: old.value, current: leaf.value };
    else {
      const count = Math.max(old.masked.length, leaf.masked.length);
      for (let k = 0; k < count; k++) {
        const was = old.masked[k];
        const now = leaf.masked[k];
        if (was?.value !== now?.value) ignored.push((now ?? was) as MaskedValue);
      }
    }
  }
  for (const [path, leaf] of before) if (!after.has(path)) changes[name(path)] = { previous: leaf.value, current: null };
  return { changes, ignored };
}
