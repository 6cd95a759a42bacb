// BENCH_ORDERS_STEPS=1: where ours' open-loop orders spent their time inside the server, step by
// step, read off the placement's diagnostics channel (server/observability/placement-steps.ts):
// each gap's p50/p90/p99, and how the slowest 1 % of orders spent theirs. The channel is listened
// to only during ours' open-loop slices; the floor publishes nothing.
import diagnosticsChannel from 'node:diagnostics_channel';
import { PLACEMENT_STEPS_CHANNEL, type PlacementStep } from '../../server/observability/placement-steps.ts';
import { fixed, percentile } from './common.ts';

export interface StepsRecorder {
  /** Listens until the returned function is called. */
  listen(): () => void;
  /** The report's lines, for what was heard so far. */
  lines(): string[];
}

export const createStepsRecorder = (): StepsRecorder => {
  /** Each order's steps in the order reached, by user and client order id. */
  const orders = new Map<string, { step: string; at: number }[]>();
  const onStep = (message: unknown) => {
    const { userId, clientOrderId, step, at } = message as PlacementStep;
    const key = `${userId}:${clientOrderId}`;
    let steps = orders.get(key);
    if (!steps) orders.set(key, (steps = []));
    steps.push({ step, at });
  };

  const lines = (): string[] => {
    // Only orders heard from their start to their answer.
    const whole = [...orders.values()].filter((steps) => steps[0]?.step === 'received' && steps.at(-1)?.step === 'answered');
    if (whole.length === 0) return ['  steps: no order was heard from start to answer'];
    const gaps = new Map<string, number[]>();
    const gapsOf = (steps: { step: string; at: number }[]) => steps.slice(1).map((s, i) => ({ name: `${steps[i]!.step} -> ${s.step}`, ms: s.at - steps[i]!.at }));
    for (const steps of whole) {
      for (const { name, ms } of [...gapsOf(steps), { name: 'received -> answered (all)', ms: steps.at(-1)!.at - steps[0]!.at }]) {
        let list = gaps.get(name);
        if (!list) gaps.set(name, (list = []));
        list.push(ms);
      }
    }
    const out = [`  where ours' open-loop orders spent their time in the server (BENCH_ORDERS_STEPS; ${whole.length} orders), ms:`];
    for (const [name, list] of gaps) {
      list.sort((a, b) => a - b);
      out.push(`    ${name.padEnd(28)} p50 ${fixed(percentile(list, 50), 2).padStart(7)}  p90 ${fixed(percentile(list, 90), 2).padStart(7)}  p99 ${fixed(percentile(list, 99), 2).padStart(7)}  max ${fixed(list.at(-1)!, 1).padStart(6)}`);
    }
    const total = (steps: { at: number }[]) => steps.at(-1)!.at - steps[0]!.at;
    const slowest = [...whole].sort((a, b) => total(b) - total(a)).slice(0, Math.ceil(whole.length / 100));
    const mean = new Map<string, number>();
    for (const steps of slowest) for (const { name, ms } of gapsOf(steps)) mean.set(name, (mean.get(name) ?? 0) + ms / slowest.length);
    out.push(`    the slowest ${slowest.length} (1 %), mean per step: ${[...mean].map(([name, ms]) => `${name} ${fixed(ms, 1)}`).join('; ')}`);
    return out;
  };

  return {
    listen: () => {
      diagnosticsChannel.subscribe(PLACEMENT_STEPS_CHANNEL, onStep);
      return () => diagnosticsChannel.unsubscribe(PLACEMENT_STEPS_CHANNEL, onStep);
    },
    lines,
  };
};
