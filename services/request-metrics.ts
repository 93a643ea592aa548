// The API's RED metrics (gws_http_requests_total, gws_http_request_duration_seconds), kept as plain
// numbers per label set and turned into Prometheus' format by prom-client's registry at each scrape.
// Why not prom-client's own Counter and Histogram: their labelled children validate, copy and hash
// the labels on every observation (about 1.5 µs a request for the two, plus the garbage), which is
// 5 % of a /health request and showed in bench row 9. Here a label set is found once (two map
// lookups, nothing allocated) and each request adds to a count, a sum and one bucket.
import type { Metric, Registry } from 'prom-client';

export interface RequestLabels {
  method: string;
  route: string;
  status_class: string;
}

/** Any other method a client makes up counts as OTHER: a label set no request can grow. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const METHOD_INDEX = new Map(METHODS.map((m, i) => [m, i]));

/** One label set: its count, its sum of seconds and its (non-cumulative) bucket counts. */
interface Series {
  labels: RequestLabels;
  count: number;
  sum: number;
  buckets: Float64Array;
}

type Value = { labels: Record<string, string | number>; value: number; metricName?: string };

/** What prom-client's registry reads of a metric at a scrape (Registry.getMetricsAsString). */
interface Rendered {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: Value[];
}

export class RequestMetrics {
  private readonly all: Series[] = [];
  // route -> (method, status class) as one number -> series: found without building a key per request.
  private readonly byRoute = new Map<string, Map<number, Series>>();

  constructor(
    private readonly names: { counter: string; counterHelp: string; histogram: string; histogramHelp: string },
    private readonly bounds: readonly number[],
  ) {}

  /** Counts and times one request; `route` is its template (a bounded set), `status` its HTTP status. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const series = this.seriesOf(method, route, status);
    series.count += 1;
    series.sum += seconds;
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    series.buckets[i]! += 1;
  }

  /** Registers the counter and the histogram on `registry`; both read the same series. */
  register(registry: Registry): void {
    const { counter, counterHelp, histogram, histogramHelp } = this.names;
    const metric = (name: string, help: string, type: Rendered['type'], values: () => Value[]) =>
      ({
        name,
        help,
        type,
        aggregator: 'sum',
        get: async (): Promise<Rendered> => ({ name, help, type, aggregator: 'sum', values: values() }),
      }) as unknown as Metric;
    registry.registerMetric(metric(counter, counterHelp, 'counter', () => this.all.map((s) => ({ labels: { ...s.labels }, value: s.count }))));
    registry.registerMetric(metric(histogram, histogramHelp, 'histogram', () => this.all.flatMap((s) => this.histogramValues(histogram, s))));
  }

  private seriesOf(method: string, route: string, status: number): Series {
    let ofRoute = this.byRoute.get(route);
    if (!ofRoute) {
      ofRoute = new Map();
      this.byRoute.set(route, ofRoute);
    }
    const methodIndex = METHOD_INDEX.get(method) ?? METHODS.length;
    const statusClass = Math.floor(status / 100);
    const key = methodIndex * 10 + statusClass;
    let series = ofRoute.get(key);
    if (!series) {
      const labels = { method: METHODS[methodIndex] ?? 'OTHER', route, status_class: `${statusClass}xx` };
      series = { labels, count: 0, sum: 0, buckets: new Float64Array(this.bounds.length + 1) };
      ofRoute.set(key, series);
      this.all.push(series);
    }
    return series;
  }

  /** Prometheus' histogram lines of one series: cumulative buckets up to +Inf, then sum and count. */
  private histogramValues(name: string, s: Series): Value[] {
    const values: Value[] = [];
    let cumulative = 0;
    this.bounds.forEach((le, i) => {
      cumulative += s.buckets[i]!;
      values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: `${name}_bucket` });
    });
    values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${name}_bucket` });
    values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${name}_sum` });
    values.push({ labels: { ...s.labels }, value: s.count, metricName: `${name}_count` });
    return values;
  }
}
