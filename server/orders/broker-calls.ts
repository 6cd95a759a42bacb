// How the order service calls a broker: with a deadline, and with a failure that is the broker's
// answered as 502 BROKER_UNAVAILABLE.
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import { brokerError } from '../brokers/errors.ts';
import type { Broker } from '../brokers/types.ts';
import { AppError } from '../errors.ts';

/** The broker of a user's account (brokers.forUser). */
export type BrokerOfAccount = (account: { userId: number; assetClass: TAssetClass; mode: TTradingMode }) => Promise<Broker>;

/** How long a placement waits for the broker before it counts as unavailable. */
export const BROKER_TIMEOUT_MS = 10_000;

export const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer from the broker within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });

/** A broker call whose failure is the broker's: 502 BROKER_UNAVAILABLE. */
export const viaBroker = async <T>(call: () => Promise<T>): Promise<T> => {
  try {
    return await call();
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw brokerError(error, 'call');
  }
};

/** A broker read's failure answered as the risk gate answers it (its refusal 422, its failure 502). */
export const viaBrokerRead = async <T>(read: () => Promise<T>): Promise<T> => {
  try {
    return await read();
  } catch (error) {
    throw brokerError(error, 'read') ?? error;
  }
};
