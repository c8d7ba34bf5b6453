/**
 * A component's log file that never takes the launcher down: a write that fails (ENOSPC on a full disk,
 * EIO, the folder gone) makes it drop the component's output, counting the lines, instead of raising
 * the stream's error (which, unhandled, ended the launcher and every component with it). After
 * `retryMs` the next output opens the file again; once a write lands, a line in the file and one
 * report say how many lines were lost.
 *
 *   writing ──write fails──> dropping ──retryMs, next output──> probing ──notice lands──> writing
 *                               ^                                   │
 *                               └───────────write fails─────────────┘
 */
import { createWriteStream, type WriteStream } from 'node:fs';

export interface LogFileOptions {
  /** How long after a failure the file is tried again. */
  retryMs?: number;
  /** The launcher's own output (a failure and a recovery are reported there once each). */
  report?: (line: string) => void;
  now?: () => number;
}

const countLines = (chunk: Buffer): number => {
  let lines = 0;
  for (let index = chunk.indexOf(0x0a); index >= 0; index = chunk.indexOf(0x0a, index + 1)) lines++;
  return lines;
};

export class LogFile {
  private stream: WriteStream | undefined;
  private state: 'writing' | 'dropping' | 'probing' = 'writing';
  /** Lines lost since the last notice. */
  private dropped = 0;
  private retryAt = 0;
  private failure = '';
  private readonly retryMs: number;
  private readonly now: () => number;

  constructor(
    readonly file: string,
    private readonly options: LogFileOptions = {},
  ) {
    this.retryMs = options.retryMs ?? 5_000;
    this.now = options.now ?? Date.now;
    this.stream = this.open();
  }

  /** Lines lost and not reported yet. */
  get droppedLines(): number {
    return this.dropped;
  }

  write(chunk: Buffer): void {
    if (this.state === 'dropping') {
      if (this.now() < this.retryAt) {
        this.dropped += countLines(chunk);
        return;
      }
      this.probe();
    }
    this.send(chunk);
  }

  /** Flushes and closes the file; never rejects. */
  close(): Promise<void> {
    const stream = this.stream;
    this.stream = undefined;
    if (!stream || stream.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      stream.once('close', () => resolve());
      stream.end();
    });
  }

  private open(): WriteStream {
    const stream = createWriteStream(this.file, { flags: 'a' });
    // Without a listener, the stream's error would be thrown and end the launcher.
    stream.on('error', (error) => this.fail(stream, error));
    return stream;
  }

  private send(chunk: Buffer): void {
    const stream = this.stream;
    if (!stream || stream.destroyed) {
      this.dropped += countLines(chunk);
      return;
    }
    stream.write(chunk, (error) => {
      if (!error) return;
      this.dropped += countLines(chunk);
      this.fail(stream, error);
    });
  }

  /** Opens the file again and writes the notice first: its landing means the file takes writes again. */
  private probe(): void {
    this.state = 'probing';
    this.stream = this.open();
    const reported = this.dropped;
    const stream = this.stream;
    const notice = `[launcher] ${reported} line(s) of output were dropped while ${this.file} could not be written (${this.failure})\n`;
    stream.write(notice, (error) => {
      if (error || this.stream !== stream) return;
      this.state = 'writing';
      this.dropped -= reported;
      this.options.report?.(`${this.file} is written again; ${reported} line(s) were dropped meanwhile`);
    });
  }

  private fail(stream: WriteStream, error: Error): void {
    if (this.stream !== stream) return;
    const wasWriting = this.state === 'writing';
    this.state = 'dropping';
    this.retryAt = this.now() + this.retryMs;
    this.failure = (error as NodeJS.ErrnoException).code ?? error.message;
    this.stream = undefined;
    // Writes still queued on it are answered with an error and counted as dropped.
    stream.destroy();
    if (wasWriting) this.options.report?.(`cannot write ${this.file} (${this.failure}): its lines are dropped and counted until it can`);
  }
}
