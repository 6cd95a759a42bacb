// The slice of autocannon 8 the bench uses (the package ships no types). Field names follow
// node_modules/autocannon/README.md ("API", "Results") and lib/aggregateResult.js.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    /** Milliseconds between samples; a run also ends on a sample tick. Default 1000. */
    sampleInt?: number;
    /** Seconds before a request counts as timed out. */
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    title?: string;
    /** A run with these settings before the measured one; its figures land in `warmup`. */
    warmup?: { connections?: number; duration?: number };
    /** Return the unaggregated RawResult (encoded histograms) for autocannon.aggregateResult. */
    skipAggregateResult?: boolean;
  }

  /** hdr-histogram-percentiles-obj: mean, spread and the percentile keys (p2_5 ... p99_999). */
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p75: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
  }

  export interface Result {
    title: string | undefined;
    url: string;
    connections: number;
    pipelining: number;
    /** Seconds. */
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    '1xx': number;
    '2xx': number;
    '3xx': number;
    '4xx': number;
    '5xx': number;
    statusCodeStats: Record<string, { count: number }>;
    /** Milliseconds. */
    latency: Histogram & { totalCount: number };
    /** Requests per second sample; `total` is every completed request. */
    requests: Histogram & { total: number; sent: number };
    /** Bytes per second sample. */
    throughput: Histogram & { total: number };
    /** Present when `warmup` was given. */
    warmup?: Result;
  }

  /** One run's figures before aggregation (lib/run.js): histograms still encoded. */
  export interface RawResult {
    latencies: string;
    requests: string;
    throughput: string;
    totalCompletedRequests: number;
    totalRequests: number;
    totalBytes: number;
    samples: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    statusCodeStats: Record<string, { count: number }>;
    /** Seconds, two decimals. */
    duration: number;
    '2xx': number;
  }

  /** Without a callback the instance is an EventEmitter that is also awaitable. */
  export interface Instance<T> extends EventEmitter, PromiseLike<T> {
    stop(): void;
  }

  function autocannon(options: Options & { skipAggregateResult: true }): Instance<RawResult>;
  function autocannon(options: Options): Instance<Result>;
  namespace autocannon {
    /**
     * Merges runs made with skipAggregateResult. Latency percentiles and the counters are merged;
     * `requests` mean/percentiles and `duration` are not (they come out empty or from the first run).
     */
    function aggregateResult(results: RawResult[], options: Options): Result;
  }
  export default autocannon;
}
