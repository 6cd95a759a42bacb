// How the analysis pages follow a report while it is queued or running: `report_status` frames on
// /ws/live (one as a report is queued, starts, as each agent ends, and at its end) have the
// report, its traces and the list read again at once, and carry the agents' progress. Polling is
// the fallback only while that socket is not open (connecting, or reconnecting after a drop).
import { useSyncExternalStore } from 'react';
import type { TReportStatus, TReportStatusFrame } from '@trading-service/client';
import { queryClient, trpc } from './api.ts';
import { useLiveFrames } from './live-feed.ts';

const POLL_MS = 1_500;
const UNFINISHED: ReadonlySet<TReportStatus> = new Set(['queued', 'running']);

export const isUnfinished = (status: TReportStatus | undefined): boolean => status !== undefined && UNFINISHED.has(status);

/** The latest frame of each report this tab has heard of, and who wants to know of a new one. */
const latest = new Map<string, TReportStatusFrame>();
const listeners = new Set<() => void>();
let version = 0;

const heard = (frame: TReportStatusFrame) => {
  latest.set(frame.report_id, frame);
  version++;
  for (const listener of listeners) listener();
  void queryClient.invalidateQueries(trpc.analysis.getReport.queryFilter({ report_id: frame.report_id }));
  void queryClient.invalidateQueries(trpc.analysis.reportTraces.queryFilter({ report_id: frame.report_id }));
  void queryClient.invalidateQueries(trpc.analysis.listReports.pathFilter());
};

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};

/**
 * Listens for report_status frames while mounted. `pollEvery` is TanStack Query's
 * refetchInterval for a report: none while the frames arrive, a poll while the socket is down.
 */
export const useReportProgress = () => {
  const state = useLiveFrames((frame) => {
    if (frame.type === 'report_status') heard(frame);
  });
  useSyncExternalStore(subscribe, () => version);
  const pushed = state === 'open';
  return {
    pollEvery: (status: TReportStatus | undefined): number | false => (isUnfinished(status) && !pushed ? POLL_MS : false),
    /** The last progress frame heard for the report, if any. */
    progressOf: (reportId: string): TReportStatusFrame | undefined => latest.get(reportId),
  };
};
