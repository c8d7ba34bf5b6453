/**
 * JSON-lines logger: one object per line on stdout, `level`, `time`, `msg`, then the fields.
 * Child loggers carry fixed fields (the request id, the component) into every line they write.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Whether entries at `level` are written (to skip building fields nobody reads). */
  enabled(level: LogLevel): boolean;
  child(fields: LogFields): Logger;
}

export type LogSink = (line: string) => void;

const stdoutSink: LogSink = (line) => {
  process.stdout.write(line + '\n');
};

function serialize(value: unknown): unknown {
  if (value instanceof Error) {
    return { name: value.name, message: value.message, stack: value.stack };
  }
  return value;
}

/** One JSON line per entry; a child shares the sink and level and adds its fields to every entry. */
class JsonLogger implements Logger {
  private readonly threshold: number;
  private merged: LogFields | undefined;

  constructor(
    private readonly level: LogLevel,
    private readonly parentFields: LogFields,
    private readonly sink: LogSink,
    /** A child's own fields, merged into the parent's at its first entry: a request's logger mostly writes none. */
    private readonly ownFields?: LogFields,
  ) {
    this.threshold = rank[level];
  }

  private get base(): LogFields {
    return (this.merged ??= this.ownFields ? { ...this.parentFields, ...this.ownFields } : this.parentFields);
  }

  enabled(at: LogLevel): boolean {
    return rank[at] >= this.threshold;
  }

  debug(msg: string, fields?: LogFields): void {
    this.write('debug', msg, fields);
  }

  info(msg: string, fields?: LogFields): void {
    this.write('info', msg, fields);
  }

  warn(msg: string, fields?: LogFields): void {
    this.write('warn', msg, fields);
  }

  error(msg: string, fields?: LogFields): void {
    this.write('error', msg, fields);
  }

  child(fields: LogFields): Logger {
    return new JsonLogger(this.level, this.base, this.sink, fields);
  }

  private write(at: LogLevel, msg: string, fields?: LogFields): void {
    if (rank[at] < this.threshold) return;
    const entry: LogFields = { level: at, time: new Date().toISOString(), msg, ...this.base };
    if (fields) for (const [key, value] of Object.entries(fields)) entry[key] = serialize(value);
    this.sink(JSON.stringify(entry));
  }
}

export function createLogger(level: LogLevel, base: LogFields = {}, sink: LogSink = stdoutSink): Logger {
  return new JsonLogger(level, base, sink);
}
