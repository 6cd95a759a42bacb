// How a report's page follows its progress while it is queued or running. For now it polls the
// report and its traces. When /ws/live carries `report_status` frames, this module is the one
// place to change: subscribe with useLiveFrames, invalidate the two queries of the frame's
// report_id, and let `pollEvery` answer false.
import type { TReportStatus } from '../../index.ts';

const POLL_MS = 1_500;
const UNFINISHED: ReadonlySet<TReportStatus> = new Set(['queued', 'running']);

export const isUnfinished = (status: TReportStatus | undefined): boolean => status !== undefined && UNFINISHED.has(status);

/** TanStack Query's refetchInterval for a report and its traces: poll until it has finished. */
export const pollEvery = (status: TReportStatus | undefined): number | false => (isUnfinished(status) ? POLL_MS : false);
