// On every page: the halt banner (from /health) and the state of the orders socket.
import { useQuery } from '@tanstack/react-query';
import type { THealth } from '../../index.ts';
import type { TFeedState } from './orders-feed.ts';

const HEALTH_EVERY_MS = 10_000;

const FEED_TEXT: Record<TFeedState, string> = {
  off: 'signed out',
  connecting: 'connecting',
  open: 'live',
  waiting: 'reconnecting',
  closed: 'closed',
};

export const StatusBar = ({ feed }: { feed: TFeedState }) => {
  const health = useQuery({
    queryKey: ['health'],
    // /health answers 503 with the same body when the database is down: read it either way.
    queryFn: async () => (await fetch('/health')).json() as Promise<THealth>,
    refetchInterval: HEALTH_EVERY_MS,
  });
  return (
    <div className="status-bar" data-testid="status-bar">
      {health.data?.halted ? (
        <p className="halt-banner" role="alert" data-testid="halt-banner">
          The service is halted by an operator: orders and most routes answer 503 SERVICE_HALTED until it is lifted.
        </p>
      ) : null}
      <span className="service" data-testid="service-state">
        service: {health.isError ? 'unreachable' : (health.data?.status ?? 'checking')}
      </span>
      <span className={`feed feed-${feed}`} data-testid="feed-state">
        orders socket: {FEED_TEXT[feed]}
      </span>
    </div>
  );
};
