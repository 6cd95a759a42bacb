// The Submission of an account whose broker keeps its books in our database (the simulator's
// paper accounts): the intent, the broker's acceptance and our record of it (with the fill on
// arrival) commit together, or none of them does, so there is no moment at which the broker holds
// an order we have no record of. The risk gate's rules are judged there too, on the account read
// with its lock (Placing.judge), before the books' own checks of funds and availability; a refusal
// of either takes the intent back in the same transaction (undoIntent), so it leaves no order, as
// a gate's refusal does.
import type { InBooksPlacement, Simulator } from '../brokers/simulator/index.ts';
import { isDatabaseUnavailable } from '../db/errors.ts';
import type { WrittenAcceptance } from './broker-answer.ts';
import type { IntentOutcome } from './write-queries.ts';
import { commitStandingIntent, type Submission } from './submission.ts';

/**
 * No timer here: one that fired while the transaction ran on would mark the order failed and then
 * see it commit. The books are asked at each call (`books.placeInBooks`), not bound once.
 */
export const inBooksSubmission = (books: Pick<Simulator, 'placeInBooks'>): Submission => ({
  judgesRiskUnderLock: true,
  submit: async (placing) => {
    let written: IntentOutcome | undefined;
    let placement: InBooksPlacement<WrittenAcceptance | undefined>;
    try {
      placement = await books.placeInBooks(placing.account, placing.request, {
        intent: async (tx) => {
          written = await placing.writeIntent(tx);
          return written.claimed && written.placed;
        },
        judge: placing.judge,
        undoIntent: placing.undoIntent,
        record: (tx, answer) => placing.writeAcceptance(tx, answer.order, answer.events),
      });
    } catch (error) {
      if (isDatabaseUnavailable(error)) return { kind: 'lost', error };
      // Nothing committed, the intent neither: it is committed now, and the failure marks it after.
      return (await commitStandingIntent(placing)) ?? { kind: 'failed', error, outcomeUnknown: false };
    }
    // Its intent stood and is gone again: nothing else of the placement committed.
    if (placement.outcome === 'undone') return { kind: 'refused', error: placement.error };
    const response = await placing.answerUnlessStands(written ?? (await placing.commitIntent()));
    if (response) return { kind: 'answered', response };
    if (placement.outcome === 'refused') return { kind: 'failed', error: placement.error, outcomeUnknown: false };
    // A withdrawn placement's intent did not stand: answerUnlessStands answered it above.
    if (placement.outcome !== 'taken') return { kind: 'failed', error: new Error('a withdrawn placement reached the broker step'), outcomeUnknown: false };
    return { kind: 'accepted', order: placement.order, written: placement.recorded };
  },
});
