// The broker-error mapping (server/brokers/errors.ts): what each call site answers when the broker
// refuses, fails, or throws something else, with the words the call sites have always used (the
// expected messages are written out here, not taken from the module's tables).
import { describe, expect, it } from 'vitest';
import { brokerError, refusedError, unavailableError, unconfirmedError, type TBrokerCall } from '../../server/brokers/errors.ts';
import { BrokerRejectedError, BrokerUnavailableError } from '../../server/brokers/types.ts';
import { AppError } from '../../server/errors.ts';

const refusal = new BrokerRejectedError('insufficient buying power');
const failure = new BrokerUnavailableError('connect ECONNREFUSED 127.0.0.1:1');
const notTaken = new BrokerUnavailableError('429 too many requests', { notTaken: true });
const timeout = new Error('no answer from the broker within 10000 ms');

const answerOf = (error: AppError | undefined) => error && { code: error.code, status: error.status, message: error.message };

const rejected = (message: string) => ({ code: 'BROKER_REJECTED', status: 422, message });
const unavailable = (message: string) => ({ code: 'BROKER_UNAVAILABLE', status: 502, message });
const notCancelable = (message: string) => ({ code: 'ORDER_NOT_CANCELABLE', status: 422, message });

/** Per call site: the answer to a refusal, to a failure (with its message), and to any other error (undefined: rethrown as it is). */
const TABLE: { call: TBrokerCall; site: string; refused: object | undefined; failed: object; other: object | undefined }[] = [
  { call: 'call', site: 'orders/broker-calls.ts viaBroker', refused: unavailable('The broker could not be reached'), failed: unavailable('The broker could not be reached'), other: unavailable('The broker could not be reached') },
  { call: 'read', site: 'orders/gates.ts refusalOf', refused: rejected('The broker refused: insufficient buying power'), failed: unavailable('The broker could not be reached'), other: undefined },
  { call: 'place', site: 'orders/broker-answer.ts recordFailed', refused: rejected('The broker refused the order: insufficient buying power'), failed: unavailable('The broker could not be reached; the order was not placed'), other: unavailable('The broker could not be reached; the order was not placed') },
  { call: 'replace', site: 'orders/commands.ts replace', refused: rejected('The broker refused the replace: insufficient buying power'), failed: unavailable('The broker could not be reached; the order was not replaced'), other: unavailable('The broker could not be reached; the order was not replaced') },
  { call: 'cancel', site: 'orders/commands.ts cancel', refused: notCancelable('The broker refused the cancel: insufficient buying power'), failed: unavailable('The broker could not be reached; the order was not canceled'), other: unavailable('The broker could not be reached; the order was not canceled') },
  { call: 'reset', site: 'brokers/brokers.ts resetPaperAccount', refused: undefined, failed: unavailable('connect ECONNREFUSED 127.0.0.1:1'), other: undefined },
  { call: 'bars', site: 'marketdata/fetch.ts', refused: rejected('The broker refused the bars: insufficient buying power'), failed: unavailable('The broker could not serve the bars: connect ECONNREFUSED 127.0.0.1:1'), other: undefined },
];

describe('brokerError', () => {
  it.each(TABLE)('$call ($site): a refusal, a failure and any other error answer as the call site always did', ({ call, refused, failed, other }) => {
    expect(answerOf(brokerError(refusal, call))).toEqual(refused);
    expect(answerOf(brokerError(failure, call))).toEqual(failed);
    expect(answerOf(brokerError(timeout, call))).toEqual(other);
    expect(answerOf(brokerError('a thrown string', call))).toEqual(other);
  });

  it('answers a failure the broker says it never took like any other failure', () => {
    expect(answerOf(brokerError(notTaken, 'place'))).toEqual(unavailable('The broker could not be reached; the order was not placed'));
    expect(answerOf(brokerError(notTaken, 'reset'))).toEqual(unavailable('429 too many requests'));
  });

  it('answers AppErrors of its own, never the one it was given', () => {
    const given = new AppError('BROKER_NOT_CONFIGURED', 'No active us_equity broker key is registered');
    expect(brokerError(given, 'read')).toBeUndefined();
    expect(brokerError(given, 'place')).not.toBe(given);
  });
});

describe('a replay of an order its broker refused or failed, and an outcome unknown', () => {
  it('answers from the stored reason as the first copy did', () => {
    expect(answerOf(refusedError('replay', 'insufficient buying power'))).toEqual(rejected('The broker refused the order: insufficient buying power'));
    expect(answerOf(unavailableError('replay'))).toEqual(unavailable('The broker could not be reached'));
  });

  it('answers an order whose outcome is unknown 502, pending until reconciled', () => {
    expect(answerOf(unconfirmedError())).toEqual(unavailable('The broker did not answer: the order may have reached it, and stays pending until it is reconciled with the broker'));
  });
});
