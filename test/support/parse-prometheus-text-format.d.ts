/** Types for `parse-prometheus-text-format` (it ships none): the prom2json shape it returns. */
declare module "parse-prometheus-text-format" {
  export type Sample = {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  };
  export type MetricFamily = { name: string; help: string; type: string; metrics: Sample[] };
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
