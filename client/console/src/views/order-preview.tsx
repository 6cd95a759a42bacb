// The ticket's preview box: what the order would cost, from POST /api/equity/orders/preview (the
// server prices it with the fills' own fee profiles, so the console computes no money itself),
// with the last price following the live feed's ticks, and the sentence that says what sending
// the ticket will do. Numbers are text, in a labelled region a screen reader can find.
import { Paper, Text, Title } from '@mantine/core';
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
    <Paper component="section" withBorder p="md" aria-label="Order preview" className="panel order-preview" data-testid="order-preview" aria-busy={pending}>
      <Title order={2} size="h4" mb="sm">
        Preview
      </Title>
      {preview ? (
        <>
          <dl className="stats">
            <dt>Last price</dt>
            <dd data-testid="preview-last-price">{lastPriceText(preview, last, instrument)}</dd>
            <dt>{preview.side === 'buy' ? 'Estimated cost' : 'Estimated proceeds'}</dt>
            <dd data-testid="preview-cost" className="stats-strong">
              {money(estimatedAmount(preview), preview.currency)}
            </dd>
            <dt>Fee and tax</dt>
            <dd data-testid="preview-fee">
              {money(preview.commission, preview.currency)} + tax {money(preview.tax, preview.currency)}
            </dd>
            <dt>Buying power</dt>
            <dd data-testid="preview-buying-power">
              {preview.buying_power_before === null ? 'the broker’s own (live account)' : `${money(preview.buying_power_before, preview.currency)} → ${money(preview.buying_power_after, preview.currency)}`}
            </dd>
          </dl>
          <Text size="sm" mt="md" className="confirmation" data-testid="order-confirmation">
            {confirmationText(preview, prices, instrument)}
          </Text>
        </>
      ) : error ? (
        <Text size="sm" c="dimmed" data-testid="preview-unavailable">
          No preview: {shownError(error).code}.
        </Text>
      ) : (
        <Text size="sm" c="dimmed">
          Fill in the symbol and quantity to see the cost.
        </Text>
      )}
    </Paper>
  );
};
