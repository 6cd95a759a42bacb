// The placements under way in this process, and the broker events that arrived during them (a
// simulated market order's fill comes before the broker's answer returns): shared by the placement,
// which records those events with the broker's answer when it can, and the intake, which applies
// whatever it leaves.
import type { TBrokerEvent } from '../../contracts/brokers.ts';
import type { TOrderResponse } from '../../contracts/orders.ts';

/** The key of one placement: user and client order id. */
export const placementKey = (userId: number, clientOrderId: string) => `${userId}:${clientOrderId}`;

export interface PlacementsUnderWay {
  /** The placement of this key under way in this process, if any. */
  running(key: string): Promise<TOrderResponse> | undefined;
  /** Holds `run` as the key's placement under way until it settles; answers what it answers. */
  track(key: string, run: Promise<TOrderResponse>): Promise<TOrderResponse>;
  /** Keeps aside an event that arrived while the key's placement is under way. */
  holdEarly(key: string, event: TBrokerEvent): void;
  /** Takes every event kept aside for the key, for the placement to record with its answer. */
  takeEarly(key: string): TBrokerEvent[];
  /** Gives back taken events the placement did not record, ahead of any kept aside since. */
  giveBack(key: string, taken: readonly TBrokerEvent[]): void;
  /** The intake also received the events an answer recorded itself: they are done with. */
  forgetRecorded(key: string, recorded: readonly TBrokerEvent[]): void;
  /** Takes the event back if it is still kept aside (the placement left it); false when it is not. */
  takeLeftOver(key: string, event: TBrokerEvent): boolean;
}

export const createPlacementsUnderWay = (): PlacementsUnderWay => {
  /** Placements under way in this process, by user and client order id. */
  const inFlight = new Map<string, Promise<TOrderResponse>>();
  /** Broker events that arrived while their order's placement was under way, by the same key. */
  const early = new Map<string, TBrokerEvent[]>();
  return {
    running: (key) => inFlight.get(key),
    track: async (key, run) => {
      inFlight.set(key, run);
      try {
        return await run;
      } finally {
        if (inFlight.get(key) === run) inFlight.delete(key);
      }
    },
    holdEarly: (key, event) => {
      early.set(key, [...(early.get(key) ?? []), event]);
    },
    takeEarly: (key) => {
      const taken = early.get(key) ?? [];
      early.delete(key);
      return taken;
    },
    giveBack: (key, taken) => {
      early.set(key, [...taken, ...(early.get(key) ?? [])]);
    },
    forgetRecorded: (key, recorded) => {
      const left = (early.get(key) ?? []).filter((event) => !recorded.includes(event));
      if (left.length > 0) early.set(key, left);
      else early.delete(key);
    },
    takeLeftOver: (key, event) => {
      const waiting = early.get(key);
      const index = waiting?.indexOf(event) ?? -1;
      if (!waiting || index < 0) return false;
      waiting.splice(index, 1);
      if (waiting.length === 0) early.delete(key);
      return true;
    },
  };
};
