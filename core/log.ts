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

export function createLogger(level: LogLevel, base: LogFields = {}, sink: LogSink = stdoutSink): Logger {
  const threshold = rank[level];
  const write = (at: LogLevel, msg: string, fields?: LogFields): void => {
    if (rank[at] < threshold) return;
    const entry: LogFields = { level: at, time: new Date().toISOString(), msg, ...base };
    if (fields) for (const [key, value] of Object.entries(fields)) entry[key] = serialize(value);
    sink(JSON.stringify(entry));
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    child: (fields) => createLogger(level, { ...base, ...fields }, sink),
  };
}
