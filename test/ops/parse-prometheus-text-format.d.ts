declare module "parse-prometheus-text-format" {
  export interface PrometheusSample {
    readonly value?: string
    readonly labels?: Record<string, string>
    readonly buckets?: Record<string, string>
    readonly quantiles?: Record<string, string>
    readonly count?: string
    readonly sum?: string
  }
  export interface PrometheusFamily {
    readonly name: string
    readonly help: string
    readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED"
    readonly metrics: ReadonlyArray<PrometheusSample>
  }
  const parse: (text: string) => Array<PrometheusFamily>
  export default parse
}
