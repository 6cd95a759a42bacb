// The pieces that keep a broker stream alive, on a clock the test moves: the reconnect schedule
// (doubling, capped, reset), the silence watch (rounds, a silence, a round's own reason, stop),
// and the bridge from a connection's callbacks to an async iterator (items, then the failure;
// an abort ends it quietly; either way the connection is stopped).
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { pullFromStream, reconnectSchedule, watchSilence, type StreamSink } from '../../server/brokers/stream-keepalive.ts';

describe('reconnectSchedule', () => {
  it('doubles from the initial wait up to the cap, jittered in the upper half, and starts again after a reset', () => {
    const highest = reconnectSchedule({ initialMs: 100, maxMs: 500 }, () => 0.999_999);
    expect([1, 2, 3, 4, 5].map(() => highest.next('closed').delayMs)).toEqual([100, 200, 400, 500, 500]);
    highest.reset();
    expect(highest.next('silent')).toEqual({ attempt: 1, delayMs: 100, reason: 'silent' });
    const lowest = reconnectSchedule({ initialMs: 100, maxMs: 500 }, () => 0);
    expect([1, 2, 3].map(() => lowest.next('closed').delayMs)).toEqual([50, 100, 200]);
  });
});

describe('watchSilence', () => {
  const watched = (onRound: (openForMs: number) => string | undefined = () => undefined) => {
    const clock = manualClock('2025-06-12T00:00:00Z');
    const rounds: number[] = [];
    const givenUp: string[] = [];
    const watch = watchSilence({
      clock,
      silenceMs: 1_000,
      onRound: (openForMs) => {
        rounds.push(openForMs);
        return onRound(openForMs);
      },
      onGiveUp: (reason) => givenUp.push(reason),
    });
    return { clock, watch, rounds, givenUp };
  };

  it('runs a round every quarter of the silence while something is heard, and gives up once nothing is', () => {
    const { clock, watch, rounds, givenUp } = watched();
    for (let round = 0; round < 8; round += 1) {
      clock.advance(250);
      watch.heard();
    }
    expect(rounds).toEqual([250, 500, 750, 1_000, 1_250, 1_500, 1_750, 2_000]);
    expect(givenUp).toEqual([]);
    // Rounds at 2250, 2500, 2750 and 3000 hear nothing new; the one at 3250 is past the silence.
    for (let round = 0; round < 5; round += 1) clock.advance(250);
    expect(givenUp).toEqual(['silent']);
    expect(watch.isSilent()).toBe(true);
    clock.advance(10_000);
    expect(givenUp).toEqual(['silent']);
  });

  it('gives up with the reason a round answers, and not at all once stopped', () => {
    const { clock, givenUp } = watched((openForMs) => (openForMs > 600 ? 'not subscribed' : undefined));
    clock.advance(250);
    clock.advance(250);
    clock.advance(250);
    expect(givenUp).toEqual(['not subscribed']);

    const stopped = watched();
    stopped.watch.stop();
    stopped.clock.advance(5_000);
    expect(stopped.rounds).toEqual([]);
    expect(stopped.givenUp).toEqual([]);
  });
});

describe('pullFromStream', () => {
  const connection = () => {
    let sink: StreamSink<number> | undefined;
    let stops = 0;
    return {
      start: (given: StreamSink<number>) => {
        sink = given;
        return () => void (stops += 1);
      },
      sink: () => sink!,
      started: () => sink !== undefined,
      stops: () => stops,
    };
  };

  it('hands on the items pushed, then throws the failure, and stops the connection', async () => {
    const stream = connection();
    const iterator = pullFromStream(stream.start, new AbortController().signal);
    const first = iterator.next();
    stream.sink().push(1);
    stream.sink().push(2);
    stream.sink().fail(new Error('refused'));
    expect(await first).toEqual({ value: 1, done: false });
    expect(await iterator.next()).toEqual({ value: 2, done: false });
    await expect(iterator.next()).rejects.toThrow('refused');
    expect(stream.stops()).toBe(1);
  });

  it('ends quietly when the signal aborts, and stops the connection', async () => {
    const stream = connection();
    const controller = new AbortController();
    const iterator = pullFromStream(stream.start, controller.signal);
    const next = iterator.next();
    controller.abort();
    expect(await next).toEqual({ value: undefined, done: true });
    expect(stream.stops()).toBe(1);
  });

  it('does not start on a signal already aborted', async () => {
    const stream = connection();
    const controller = new AbortController();
    controller.abort();
    expect(await pullFromStream(stream.start, controller.signal).next()).toEqual({ value: undefined, done: true });
    expect(stream.started()).toBe(false);
  });
});
