/**
 * Where an HTML output runs. A page of few nodes, shallow, is converted on the caller's thread, where
 * that is cheaper than a round trip to a worker thread (bench/html-threads.ts and
 * bench/fetch-throughput.ts --response-type measure it; HTML_INLINE_MAX_SIZE, HTML_INLINE_MAX_NODES);
 * anything bigger, denser or deeper goes to the process's worker pool (engine/threads) with a time
 * budget, so an event loop never does more than a small page's work.
 * Either way the parse caps hold: a page past one, or past the thread's time or memory budget, is
 * refused with an HtmlRefused naming it.
 */
import { isTaskFailure, loadTasksOnThisThread, taskModule, type TaskModule, type WorkerPool } from '../threads';
import { MAX_DEPTH } from './dom';
import { HtmlRefused, type ParseCaps } from './limits';
import { scanHtml } from './scan';
import { watchPage } from './page-watch';
import type { BodyCheck } from '../types';
import { sourceText, type HtmlAnswer, type HtmlSource, type HtmlTaskInput, type OutputTasks } from './tasks';

/** A table of HTML tasks (each made with `htmlTask`): the outputs' own (./tasks.ts), or another module's (Extract's). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each task has its own arguments
export type HtmlTaskTable = Readonly<Record<string, (input: HtmlTaskInput<any>) => HtmlAnswer<unknown>>>;
export type HtmlTaskArgs<T extends HtmlTaskTable, N extends keyof T> = Parameters<T[N]>[0]['args'];
export type HtmlTaskValue<T extends HtmlTaskTable, N extends keyof T> = ReturnType<T[N]> extends HtmlAnswer<infer V> ? V : never;

export interface HtmlOutputsOptions {
  pool: WorkerPool;
  caps: ParseCaps;
  /** Pages up to this many characters (bytes, before decoding) are scanned on the caller's thread... */
  inlineMaxChars: number;
  /** ...and converted there when they make at most this many nodes (nested at most 400 deep). */
  inlineMaxNodes: number;
  /** Time one page's output may take on a thread. */
  timeoutMs: number;
  /** The pool's memory budget per thread, in MB (named in refusals). */
  memoryMb: number;
}

const OUTPUT_TASKS: TaskModule<OutputTasks> = taskModule<OutputTasks>(__dirname, 'tasks');

export class HtmlOutputs {
  constructor(private readonly options: HtmlOutputsOptions) {}

  get caps(): ParseCaps {
    return this.options.caps;
  }

  /** One of the outputs (./tasks.ts) of a page; throws HtmlRefused past a cap or a budget. */
  run<N extends keyof OutputTasks & string>(name: N, page: HtmlSource, args: HtmlTaskArgs<OutputTasks, N>, signal?: AbortSignal): Promise<HtmlTaskValue<OutputTasks, N>> {
    return this.runTask(OUTPUT_TASKS, name, page, args, signal);
  }

  /** An HTML task of another module (made with `htmlTask`), placed and bounded the same way. */
  async runTask<T extends HtmlTaskTable, N extends keyof T & string>(
    module: TaskModule<T>,
    name: N,
    page: HtmlSource,
    args: HtmlTaskArgs<T, N>,
    signal?: AbortSignal,
  ): Promise<HtmlTaskValue<T, N>> {
    const { caps, inlineMaxChars, inlineMaxNodes, pool, timeoutMs, memoryMb } = this.options;
    let source = page;
    if ('html' in source && source.html.length > caps.maxChars) throw new HtmlRefused('size', caps.maxChars);
    if (('html' in source ? source.html.length : source.bytes.byteLength) <= inlineMaxChars) {
      const html = sourceText(source);
      const scan = scanHtml(html, caps);
      if (!scan.ok) throw new HtmlRefused(scan.cap, scan.limit);
      if (scan.depth <= MAX_DEPTH && scan.nodes <= inlineMaxNodes) {
        const task = loadTasksOnThisThread(module)[name] as T[N];
        return answerOf(task({ page: { html }, caps, args, scanned: scan.html }) as HtmlAnswer<HtmlTaskValue<T, N>>);
      }
      source = { html };
    }
    // The page's bytes move to the thread in a buffer of their own (a Buffer may share its memory with others).
    const moved = 'bytes' in source ? { bytes: new Uint8Array(source.bytes), ...(source.contentType !== undefined ? { contentType: source.contentType } : {}) } : source;
    try {
      const answer = await pool.run(module, name, { page: moved, caps, args } as Parameters<T[N]>[0], {
        timeoutMs,
        ...('bytes' in moved ? { transfer: [moved.bytes.buffer as ArrayBuffer] } : {}),
        ...(signal ? { signal } : {}),
      });
      return answerOf(answer as HtmlAnswer<HtmlTaskValue<T, N>>);
    } catch (error) {
      if (!isTaskFailure(error)) throw error;
      if (error.reason === 'timeout') throw new HtmlRefused('time', timeoutMs);
      if (error.reason === 'memory') throw new HtmlRefused('memory', memoryMb);
      if (error.reason === 'queue_full') throw new HtmlRefused('busy', 0);
      throw error;
    }
  }

  /**
   * The parse caps applied to a page's bytes while they are downloaded (./page-watch.ts), for a
   * caller whose outputs will parse the page: a page past a cap is refused before the rest is read.
   * A refusal waits for `keepBytes` (what the caller still reads of the page).
   */
  pageCheck(keepBytes = 0): BodyCheck {
    const { caps } = this.options;
    return { start: (answer) => watchPage({ caps, keepBytes, ...(answer.contentType !== undefined ? { contentType: answer.contentType } : {}) }) };
  }

  /** The parse caps alone, on this thread (linear): the refusal of a page, or undefined. */
  check(html: string): HtmlRefused | undefined {
    const scan = scanHtml(html, this.options.caps);
    return scan.ok ? undefined : new HtmlRefused(scan.cap, scan.limit);
  }
}

function answerOf<V>(answer: HtmlAnswer<V>): V {
  if (!answer.ok) throw new HtmlRefused(answer.cap, answer.limit);
  return answer.value;
}
