/**
 * A small Prometheus text-format registry: counters and histograms with labels, rendered at
 * `/metrics`. Labels are kept low-cardinality by the callers (route patterns, not paths).
 */
type Labels = Record<string, string>;

const escapeValue = (value: string): string =>
  /[\\"\n]/.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : value;

/** The series id of a label set: names in order, values escaped (called on every request: kept cheap). */
function key(labels: Labels): string {
  const names = Object.keys(labels);
  if (names.length > 1) names.sort();
  let id = '';
  for (const name of names) id += `${id ? ',' : ''}${name}="${escapeValue(labels[name] ?? '')}"`;
  return id;
}

interface Metric {
  render(): string[];
}

export class Counter implements Metric {
  private readonly values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    this.incSeries(key(labels), by);
  }

  /** `inc` for a label set named once: the series id is built here, not at every count. */
  bound(labels: Labels): (by?: number) => void {
    const id = key(labels);
    return (by = 1) => this.incSeries(id, by);
  }

  private incSeries(id: string, by: number): void {
    this.values.set(id, (this.values.get(id) ?? 0) + by);
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [id, value] of this.values) lines.push(`${this.name}${id ? `{${id}}` : ''} ${value}`);
    return lines;
  }
}

export class Histogram implements Metric {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: number[],
  ) {}

  observe(labels: Labels, value: number): void {
    this.observeSeries(key(labels), value);
  }

  /** `observe` for a label set named once: the series id is built here, not at every observation. */
  bound(labels: Labels): (value: number) => void {
    const id = key(labels);
    return (value) => this.observeSeries(id, value);
  }

  private observeSeries(id: string, value: number): void {
    let entry = this.series.get(id);
    if (!entry) {
      entry = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(id, entry);
    }
    for (let index = 0; index < this.buckets.length; index++) {
      if (value <= (this.buckets[index] ?? Infinity)) entry.counts[index] = (entry.counts[index] ?? 0) + 1;
    }
    entry.sum += value;
    entry.count += 1;
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [id, entry] of this.series) {
      const prefix = id ? `${id},` : '';
      this.buckets.forEach((bound, index) => lines.push(`${this.name}_bucket{${prefix}le="${bound}"} ${entry.counts[index] ?? 0}`));
      lines.push(`${this.name}_bucket{${prefix}le="+Inf"} ${entry.count}`);
      lines.push(`${this.name}_sum${id ? `{${id}}` : ''} ${entry.sum}`);
      lines.push(`${this.name}_count${id ? `{${id}}` : ''} ${entry.count}`);
    }
    return lines;
  }
}

/** A value set from outside, replaced whole at each set (for what is read when metrics are rendered). */
export class Gauge implements Metric {
  private values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** Replaces every series with these. */
  setAll(series: Array<{ labels: Labels; value: number }>): void {
    this.values = new Map(series.map(({ labels, value }) => [key(labels), value]));
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const [id, value] of this.values) lines.push(`${this.name}${id ? `{${id}}` : ''} ${value}`);
    return lines;
  }
}

export class Registry {
  private readonly metrics: Metric[] = [];

  counter(name: string, help: string): Counter {
    const metric = new Counter(name, help);
    this.metrics.push(metric);
    return metric;
  }

  gauge(name: string, help: string): Gauge {
    const metric = new Gauge(name, help);
    this.metrics.push(metric);
    return metric;
  }

  histogram(name: string, help: string, buckets: number[]): Histogram {
    const metric = new Histogram(name, help, buckets);
    this.metrics.push(metric);
    return metric;
  }

  render(): string {
    const memory = process.memoryUsage();
    const lines = this.metrics.flatMap((metric) => metric.render());
    lines.push('# TYPE process_resident_memory_bytes gauge', `process_resident_memory_bytes ${memory.rss}`);
    lines.push('# TYPE nodejs_heap_used_bytes gauge', `nodejs_heap_used_bytes ${memory.heapUsed}`);
    lines.push('# TYPE process_uptime_seconds gauge', `process_uptime_seconds ${process.uptime()}`);
    return lines.join('\n') + '\n';
  }
}
