/** The part of autocannon's programmatic API the benchmark uses (the package ships no types). */
declare module "autocannon" {
  import type { EventEmitter } from "node:events"

  export interface Options {
    readonly url: string
    readonly method?: string
    readonly body?: string | Buffer
    readonly headers?: Record<string, string>
    readonly connections?: number
    readonly pipelining?: number
    readonly duration?: number
    /** A number of requests instead of a duration. */
    readonly amount?: number
    readonly timeout?: number
    readonly bailout?: number
  }

  export interface Histogram {
    readonly average: number
    readonly mean: number
    readonly stddev: number
    readonly min: number
    readonly max: number
    readonly total: number
    readonly p50: number
    readonly p99: number
  }

  export interface Result {
    readonly duration: number
    readonly errors: number
    readonly timeouts: number
    readonly mismatches: number
    readonly non2xx: number
    readonly resets: number
    readonly "2xx": number
    readonly statusCodeStats: Record<string, { readonly count: number }>
    readonly latency: Histogram
    readonly requests: Histogram & { readonly sent: number }
    readonly throughput: Histogram
  }

  export interface Instance extends EventEmitter {
    stop(): void
  }

  function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): Instance
  export default autocannon
}
