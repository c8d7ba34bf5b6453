/**
 * Runs checked `js_instructions` in order on a page within one time budget. A failing instruction is
 * reported and the next one runs (a missing cookie banner must not sink the request); once the budget
 * is spent, the remaining ones are reported as skipped. Each action waits at most `actionTimeoutMs`
 * (or what is left of the budget) for its element.
 */
import type { Page } from 'playwright-core';
import { KINDS, type Instruction, type InstructionOutcome, type InstructionsReport } from './instructions';

export interface InstructionLimits {
  budgetMs: number;
  actionTimeoutMs: number;
}

/** Default wait for the element of one action (click, fill, wait_for…). */
export const ACTION_TIMEOUT_MS = 10_000;

const RESULT_LIMIT = 1_024;

export async function runInstructions(page: Page, instructions: readonly Instruction[], limits: InstructionLimits): Promise<InstructionsReport> {
  const started = Date.now();
  const deadline = started + limits.budgetMs;
  const outcomes: InstructionOutcome[] = [];
  for (const instruction of instructions) {
    const left = deadline - Date.now();
    const params = instruction.arg;
    if (left <= 0) {
      outcomes.push({ instruction: instruction.kind, params, success: false, skipped: true, duration_ms: 0, error: 'time budget for instructions spent' });
      continue;
    }
    if (instruction.kind === 'wait' && (instruction.arg as number) > left) {
      await page.waitForTimeout(left).catch(() => undefined);
      outcomes.push({ instruction: 'wait', params, success: false, duration_ms: left, error: 'cut short: time budget for instructions spent' });
      continue;
    }
    const begin = Date.now();
    try {
      const result = await withTimeout(KINDS[instruction.kind].run(page, instruction.arg, Math.min(limits.actionTimeoutMs, left)), left);
      outcomes.push({ instruction: instruction.kind, params, success: true, duration_ms: Date.now() - begin, ...resultOf(instruction, result) });
    } catch (error) {
      outcomes.push({ instruction: instruction.kind, params, success: false, duration_ms: Date.now() - begin, error: firstLine(error) });
    }
  }
  const count = (predicate: (outcome: InstructionOutcome) => boolean): number => outcomes.filter(predicate).length;
  return {
    instructions: outcomes,
    instructions_count: outcomes.length,
    instructions_succeeded: count((outcome) => outcome.success),
    instructions_failed: count((outcome) => !outcome.success && !outcome.skipped),
    instructions_skipped: count((outcome) => outcome.skipped === true),
    instructions_duration_ms: Date.now() - started,
  };
}

/** Scripts have no timeout of their own: a script that never ends is given up on at the budget. */
async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, expiry]);
  } finally {
    clearTimeout(timer);
    // A late rejection of the abandoned work is expected once the page closes.
    work.catch(() => undefined);
  }
}

function resultOf(instruction: Instruction, result: unknown): { result?: unknown } {
  if ((instruction.kind !== 'evaluate' && instruction.kind !== 'frame_evaluate') || result === undefined) return {};
  try {
    const json = JSON.stringify(result);
    if (json === undefined) return {};
    return { result: json.length <= RESULT_LIMIT ? result : `${json.slice(0, RESULT_LIMIT)}…` };
  } catch {
    return {};
  }
}

/** Playwright errors carry a call log after the first line; the caller gets the first line only. */
function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? message).replace(/^\w+\.\w+: /, '').slice(0, 300);
}
