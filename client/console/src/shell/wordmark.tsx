// The product's name and mark: three candles, the middle one up, beside "Trading console".
import { Group, Text } from '@mantine/core';

const CandlesMark = ({ size }: { size: number }) => (
  <svg width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" focusable="false" className="wordmark-mark">
    <rect width="24" height="24" rx="5" className="wordmark-tile" />
    <path d="M6.5 7v10M12 4.5v15M17.5 8v8" className="wordmark-wick" />
    <rect x="4.75" y="9.5" width="3.5" height="5" rx="0.75" className="wordmark-body" />
    <rect x="10.25" y="6.5" width="3.5" height="9.5" rx="0.75" className="wordmark-body" />
    <rect x="15.75" y="10" width="3.5" height="4" rx="0.75" className="wordmark-body" />
  </svg>
);

export const Wordmark = ({ size = 'md' }: { size?: 'md' | 'lg' }) => (
  <Group gap={size === 'lg' ? 10 : 8} wrap="nowrap" className="wordmark">
    <CandlesMark size={size === 'lg' ? 32 : 24} />
    <Text component="span" fw={700} fz={size === 'lg' ? 'xl' : 'md'} className="wordmark-name">
      Trading console
    </Text>
  </Group>
);
