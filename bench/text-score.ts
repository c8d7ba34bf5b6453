/**
 * The text metric of the article extraction benchmark (its data folder's README), shared by
 * bench/main-content.ts and bench/documents.ts: bags of word 4-grams, per-item precision and recall
 * (counts clipped), means over items, F1 of the means, and exact token accuracy.
 */

export const tokens = (text: string): string[] => text.match(/[\p{L}\p{N}_]+/gu) ?? [];

export function shingles(text: string): Map<string, number> {
  const toks = tokens(text);
  const out = new Map<string, number>();
  if (toks.length === 0) return out;
  const add = (key: string): void => void out.set(key, (out.get(key) ?? 0) + 1);
  if (toks.length < 4) add(toks.join(' '));
  else for (let i = 0; i + 4 <= toks.length; i++) add(toks.slice(i, i + 4).join(' '));
  return out;
}

export interface PageScore {
  id: string;
  /** undefined when the prediction is empty (left out of precision). */
  precision?: number;
  /** undefined when the truth is empty (left out of recall). */
  recall?: number;
  exact: boolean;
}

export function scorePage(id: string, truth: string, prediction: string): PageScore {
  const t = shingles(truth);
  const p = shingles(prediction);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const [key, count] of p) {
    const inTruth = t.get(key) ?? 0;
    tp += Math.min(count, inTruth);
    fp += Math.max(0, count - inTruth);
  }
  for (const [key, count] of t) fn += Math.max(0, count - (p.get(key) ?? 0));
  const sum = tp + fp + fn;
  if (sum > 0) [tp, fp, fn] = [tp / sum, fp / sum, fn / sum];
  const a = tokens(truth);
  const b = tokens(prediction);
  return {
    id,
    ...(p.size > 0 ? { precision: tp + fp > 0 ? tp / (tp + fp) : 0 } : {}),
    ...(t.size > 0 ? { recall: p.size > 0 && tp + fn > 0 ? tp / (tp + fn) : 0 } : {}),
    exact: a.length === b.length && a.every((token, i) => token === b[i]),
  };
}

export interface Summary {
  f1: number;
  precision: number;
  recall: number;
  accuracy: number;
}

export const mean = (values: number[]): number => (values.length === 0 ? 0 : values.reduce((sum, v) => sum + v, 0) / values.length);

export function summarize(pages: PageScore[]): Summary {
  const precision = mean(pages.flatMap((p) => (p.precision === undefined ? [] : [p.precision])));
  const recall = mean(pages.flatMap((p) => (p.recall === undefined ? [] : [p.recall])));
  return { precision, recall, f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall), accuracy: mean(pages.map((p) => (p.exact ? 1 : 0))) };
}
