// The feedback every action gives: a refusal with its code and message, or what was done.
import type { TShownError } from './api.ts';
import { shownError } from './api.ts';

export const ErrorNotice = ({ error }: { error: unknown }) => {
  if (!error) return null;
  const shown: TShownError = shownError(error);
  return (
    <p className="notice error" role="alert" data-testid="error">
      <strong className="code">{shown.code}</strong> {shown.message}
    </p>
  );
};

export const DoneNotice = ({ text }: { text: string | undefined }) =>
  text ? (
    <p className="notice done" role="status" data-testid="done">
      {text}
    </p>
  ) : null;
