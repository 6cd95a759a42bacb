// On every page: the halt banner and the service's health (from /health), the flags that gate
// orders (from /health/flags), and the state of each socket: orders, and live (ticks, signals,
// bot, analysis progress) while a page listens to it. A quiet strip under the header: each socket's
// state has a dot in its colour and says itself in words.
import { useQuery } from '@tanstack/react-query';
import type { TFeatureFlags, THealth } from '@trading-service/client';
import { LIVE_STATE_TEXT, useLiveChannelState } from './live-feed.ts';
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
  const flags = useQuery({ queryKey: ['flags'], queryFn: async () => (await fetch('/health/flags')).json() as Promise<TFeatureFlags>, refetchInterval: HEALTH_EVERY_MS });
  const live = useLiveChannelState();
  return (
    <div className="status-bar" data-testid="status-bar">
      {health.data?.halted ? (
        <p className="halt-banner" role="alert" data-testid="halt-banner">
          The service is halted by an operator: orders and most routes answer 503 SERVICE_HALTED until it is lifted.
        </p>
      ) : null}
      <span className={`service service-${health.isError ? 'unreachable' : (health.data?.status ?? 'checking')}`} data-testid="service-state">
        service: {health.isError ? 'unreachable' : (health.data?.status ?? 'checking')}
      </span>
      <span className={`feed feed-${feed}`} data-testid="feed-state">
        orders socket: {FEED_TEXT[feed]}
      </span>
      <span className={`feed feed-${live}`} data-testid="live-socket-state">
        live socket: {LIVE_STATE_TEXT[live]}
      </span>
      {flags.data ? (
        <span className="flags" data-testid="flags">
          paper orders {flags.data.FEATURE_EQUITY_PAPER ? 'on' : 'off'}, live orders {flags.data.FEATURE_EQUITY_LIVE && flags.data.ALLOW_LIVE ? 'on' : 'off'}, analysis{' '}
          {flags.data.FEATURE_LLM_ANALYSIS || flags.data.FEATURE_EQUITY_ANALYSIS ? 'on' : 'off'}
        </span>
      ) : null}
    </div>
  );
};
