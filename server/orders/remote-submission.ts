// The Submission of an account whose broker is elsewhere (every real broker, and every live
// order): the intent commits first, and the broker is called after, with a deadline. A failure
// that may have reached the broker leaves the outcome unknown; the reconciler settles it.
import { BrokerRejectedError, BrokerUnavailableError } from '../brokers/types.ts';
import { BROKER_TIMEOUT_MS, withTimeout } from './broker-calls.ts';
import { commitStandingIntent, type Submission } from './submission.ts';

export const remoteSubmission = (): Submission => ({
  submit: async (placing) => {
    const answered = await commitStandingIntent(placing);
    if (answered) return answered;
    try {
      return { kind: 'accepted', order: await withTimeout(placing.broker.placeOrder(placing.request), BROKER_TIMEOUT_MS) };
    } catch (error) {
      // Only a refusal, or a failure the broker says it never took, is known not to be an order.
      return { kind: 'failed', error, outcomeUnknown: !(error instanceof BrokerRejectedError) && !(error instanceof BrokerUnavailableError && error.notTaken) };
    }
  },
});
