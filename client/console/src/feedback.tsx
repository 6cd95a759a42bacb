// The feedback every action gives: a refusal with its code and message, or what was done.
import { Alert, Text } from '@mantine/core';
import { errorCodeOf } from '@trading-service/client';
import type { TShownError } from './api.ts';
import { shownError } from './api.ts';

export const ErrorNotice = ({ error }: { error: unknown }) => {
  if (!error) return null;
  const shown: TShownError = shownError(error);
  return (
    <Alert color="red" variant="light" role="alert" data-testid="error" className="notice-alert" title={<strong className="code">{shown.code}</strong>}>
      {shown.message}
      {shown.retryAfterSec === undefined ? null : (
        <span className="retry" data-testid="retry-after">
          {' '}
          Try again in {shown.retryAfterSec} s (after {new Date(Date.now() + shown.retryAfterSec * 1000).toLocaleTimeString('en-GB', { timeZone: 'UTC' })} UTC).
        </span>
      )}
    </Alert>
  );
};

export const DoneNotice = ({ text }: { text: string | undefined }) =>
  text ? (
    <Alert color="teal" variant="light" role="status" data-testid="done" className="notice-alert">
      {text}
    </Alert>
  ) : null;

/**
 * Why an account's read failed: no key of that mode and asset class is a state to explain, not an
 * error (the overview shows it on every asset class a new user has not added a key for).
 */
export const AccountReadNotice = ({ error, mode }: { error: unknown; mode: 'paper' | 'live' }) =>
  errorCodeOf(error) === 'BROKER_NOT_CONFIGURED' ? (
    <Text size="sm" c="dimmed">
      No {mode} key registered for this asset class: add one under Exchange keys.
    </Text>
  ) : (
    <ErrorNotice error={error} />
  );
