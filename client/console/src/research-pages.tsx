// The chart, backtests, analysis, bot and portfolio pages, each loaded on first visit: the charting
// library and the markdown sanitiser stay out of the first download of the console.
import { Group, Loader, Text } from '@mantine/core';
import { lazy, Suspense, type ComponentType } from 'react';

/** What shows while a page's code arrives: the same quiet loader as the session's restore. */
const PageLoading = () => (
  <Group gap="xs" py="md">
    <Loader size="xs" />
    <Text size="sm" c="dimmed">
      Loading…
    </Text>
  </Group>
);

const onDemand = (load: () => Promise<ComponentType>) => {
  const Page = lazy(async () => ({ default: await load() }));
  return () => (
    <Suspense fallback={<PageLoading />}>
      <Page />
    </Suspense>
  );
};

export const Chart = onDemand(async () => (await import('./views/chart.tsx')).Chart);
export const Backtests = onDemand(async () => (await import('./views/backtests.tsx')).Backtests);
export const Analysis = onDemand(async () => (await import('./views/analysis.tsx')).Analysis);
export const Bot = onDemand(async () => (await import('./views/bot.tsx')).Bot);
export const Portfolio = onDemand(async () => (await import('./views/portfolio.tsx')).Portfolio);
