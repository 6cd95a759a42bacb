// What a broker's failure answers, in one place: its refusal (BrokerRejectedError) is 422
// BROKER_REJECTED, its failure 502 BROKER_UNAVAILABLE, each worded for what was asked of it. The
// words are part of the interface (clients and tests read them): UNAVAILABLE and REFUSED are
// the table of them.
import type { TAppErrorCode } from '../../contracts/errors.ts';
import { AppError } from '../errors.ts';
import { BrokerRejectedError, BrokerUnavailableError } from './types.ts';

/** What was asked of the broker, named by the call site that answers its failure. */
export type TBrokerCall = 'call' | 'read' | 'place' | 'replay' | 'replace' | 'cancel' | 'reset' | 'bars';
/** The calls whose refusal is answered as one (for the others a refusal is a failure like any, or not this module's). */
export type TRefusableCall = Exclude<TBrokerCall, 'call' | 'reset'>;
/** The calls whose every error but a refusal is the broker's failure: the mapping always answers them. */
type TAnyFailureCall = 'call' | 'place' | 'replace' | 'cancel';

const NOT_REACHED = 'The broker could not be reached';

/** A failure's message per call, given the failure's own (byte for byte as the call sites always said). */
export const UNAVAILABLE: Readonly<Record<TBrokerCall, (detail: string) => string>> = {
  // A read through `viaBroker` (orders/broker-calls.ts: positions and the account, a position to close): a refusal too.
  call: () => NOT_REACHED,
  // The risk gate's reads of the account (orders/gates.ts).
  read: () => NOT_REACHED,
  // A placement's call (orders/broker-answer.ts).
  place: () => `${NOT_REACHED}; the order was not placed`,
  // A replay of an order its broker failed (orders/duplicates.ts).
  replay: () => NOT_REACHED,
  // Replacing and canceling a working order (orders/commands.ts).
  replace: () => `${NOT_REACHED}; the order was not replaced`,
  cancel: () => `${NOT_REACHED}; the order was not canceled`,
  // Resetting a simulated paper account (brokers/brokers.ts): the simulator's own words.
  reset: (detail) => detail,
  // Daily bars fetched from a user's broker (marketdata/fetch.ts).
  bars: (detail) => `The broker could not serve the bars: ${detail}`,
};

/** A refusal's code and the words before the broker's reason, per call. */
export const REFUSED: Readonly<Record<TRefusableCall, { code: Extract<TAppErrorCode, 'BROKER_REJECTED' | 'ORDER_NOT_CANCELABLE'>; prefix: string }>> = {
  read: { code: 'BROKER_REJECTED', prefix: 'The broker refused' },
  place: { code: 'BROKER_REJECTED', prefix: 'The broker refused the order' },
  replay: { code: 'BROKER_REJECTED', prefix: 'The broker refused the order' },
  replace: { code: 'BROKER_REJECTED', prefix: 'The broker refused the replace' },
  // The broker's refusal of a cancel says the order cannot be canceled.
  cancel: { code: 'ORDER_NOT_CANCELABLE', prefix: 'The broker refused the cancel' },
  bars: { code: 'BROKER_REJECTED', prefix: 'The broker refused the bars' },
};

/**
 * The calls that are the broker's alone, so that any error but a refusal is its failure (a
 * timeout, a broken connection). For the others only a BrokerUnavailableError is.
 */
const ANY_FAILURE: ReadonlySet<TBrokerCall> = new Set<TAnyFailureCall>(['call', 'place', 'replace', 'cancel']);

const isRefusable = (call: TBrokerCall): call is TRefusableCall => call in REFUSED;

/** The broker refused `call`, for `reason`. */
export const refusedError = (call: TRefusableCall, reason: string): AppError => new AppError(REFUSED[call].code, `${REFUSED[call].prefix}: ${reason}`);

/** The broker could not carry out `call`; `detail` is the failure's own message. */
export const unavailableError = (call: TBrokerCall, detail = ''): AppError => new AppError('BROKER_UNAVAILABLE', UNAVAILABLE[call](detail));

/** A placement whose outcome is unknown (the broker may have taken it): it stays pending until reconciled. */
export const unconfirmedError = (): AppError => new AppError('BROKER_UNAVAILABLE', 'The broker did not answer: the order may have reached it, and stays pending until it is reconciled with the broker');

/**
 * The AppError that `error`, thrown by the broker during `call`, answers; undefined when it is not
 * the broker's failure to answer (the caller rethrows it).
 */
export function brokerError(error: unknown, call: TAnyFailureCall): AppError;
export function brokerError(error: unknown, call: TBrokerCall): AppError | undefined;
export function brokerError(error: unknown, call: TBrokerCall): AppError | undefined {
  if (error instanceof BrokerRejectedError && isRefusable(call)) return refusedError(call, error.message);
  if (error instanceof BrokerUnavailableError || ANY_FAILURE.has(call)) return unavailableError(call, error instanceof Error ? error.message : String(error));
  return undefined;
}
