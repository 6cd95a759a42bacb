// Prometheus metrics. One registry per service instance (tests run several in one process).
// Each area adds its own series here when it lands.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type Metrics = ReturnType<typeof createMetrics>;

export const createMetrics = () => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route template, method and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route template, method and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    ordersByGate: new Counter({
      name: 'orders_gate_outcomes_total',
      help: 'Order placements by asset class, the gate that decided, and the outcome',
      labelNames: ['asset_class', 'gate', 'outcome'] as const,
      registers: [registry],
    }),
    wsConnections: new Gauge({
      name: 'ws_connections',
      help: 'Open WebSocket connections by channel',
      labelNames: ['channel'] as const,
      registers: [registry],
    }),
    jobQueueDepth: new Gauge({
      name: 'job_queue_depth',
      help: 'Jobs waiting in a queue (queued, not yet started), by queue; read when scraped',
      labelNames: ['queue'] as const,
      registers: [registry],
    }),
    wsClosed: new Counter({
      name: 'ws_closed_total',
      help: 'WebSocket connections closed by the server, by channel and close code',
      labelNames: ['channel', 'code'] as const,
      registers: [registry],
    }),
  };
};
