// The ticket's preview box: what the order would cost, from POST /api/equity/orders/preview (the
// server prices it with the fills' own fee profiles, so the console computes no money itself),
// with the last price following the live feed's ticks, and the sentence that says what sending
// the ticket will do. Numbers are text, in a labelled region a screen reader can find.
import { useState } from 'react';
import { shownError } from '../api.ts';
import { money, type InstrumentSteps } from '../format.ts';
import { confirmationText, estimatedAmount, lastPriceText, type TicketPrices } from '../format/order-preview.ts';
import { useLiveFrames } from '../live-feed.ts';
import type { TOrderPreview } from '@trading-service/client';

interface OrderPreviewProps {
  preview: TOrderPreview | undefined;
  /** The ticket's own prices, for the sentence (the preview answers the estimate only). */
  prices: TicketPrices;
  instrument: InstrumentSteps | undefined;
  pending: boolean;
  error: unknown;
}

interface Tick {
  key: string;
  last: number;
}

const keyOf = ({ asset_class, symbol }: { asset_class: string; symbol: string }) => `${asset_class}:${symbol}`;

export const OrderPreview = ({ preview, prices, instrument, pending, error }: OrderPreviewProps) => {
  const [tick, setTick] = useState<Tick>();
  useLiveFrames((frame) => {
    // Only this preview's symbol: ticks of others would push its own out.
    if (frame.type === 'tick' && preview && keyOf(frame) === keyOf(preview)) setTick({ key: keyOf(frame), last: frame.last });
  });
  // A tick of another symbol (the ticket changed since) is not this preview's price.
  const last = preview && tick?.key === keyOf(preview) ? tick.last : undefined;

  return (
    <section aria-label="Order preview" className="order-preview" data-testid="order-preview" aria-busy={pending}>
      <h2>Preview</h2>
      {preview ? (
        <>
          <dl>
            <dt>Last price</dt>
            <dd data-testid="preview-last-price">{lastPriceText(preview, last, instrument)}</dd>
            <dt>{preview.side === 'buy' ? 'Estimated cost' : 'Estimated proceeds'}</dt>
            <dd data-testid="preview-cost">{money(estimatedAmount(preview), preview.currency)}</dd>
            <dt>Fee and tax</dt>
            <dd data-testid="preview-fee">
              {money(preview.commission, preview.currency)} + tax {money(preview.tax, preview.currency)}
            </dd>
            <dt>Buying power</dt>
            <dd data-testid="preview-buying-power">
              {preview.buying_power_before === null ? 'the broker’s own (live account)' : `${money(preview.buying_power_before, preview.currency)} → ${money(preview.buying_power_after, preview.currency)}`}
            </dd>
          </dl>
          <p data-testid="order-confirmation">{confirmationText(preview, prices, instrument)}</p>
        </>
      ) : error ? (
        <p className="hint" data-testid="preview-unavailable">
          No preview: {shownError(error).code}.
        </p>
      ) : (
        <p className="hint">Fill in the symbol and quantity to see the cost.</p>
      )}
    </section>
  );
};
