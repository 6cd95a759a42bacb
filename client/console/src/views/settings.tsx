// Settings: the password (changing it ends every session, this one too) and the sessions of the
// account, one per sign-in, with the current one marked: end one, or every other one.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZPasswordChange } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { fieldErrorsOf, fieldText, TextField, type TFieldErrors } from '../forms.tsx';
import { navigate } from '../router.ts';
import { session } from '../session.ts';
import { when } from '../format.ts';

const PasswordForm = () => {
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const change = useMutation(
    trpc.auth.changePassword.mutationOptions({
      // Every session and token ends with the old password, this tab's too: sign in again.
      onSuccess: () => (session.signOut(), queryClient.clear(), navigate('/signin', { replace: true })),
    }),
  );
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const checked = ZPasswordChange.safeParse({ current_password: fieldText(form, 'current_password'), new_password: fieldText(form, 'new_password') });
    setFieldErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues));
    if (checked.success) change.mutate(checked.data);
  };
  return (
    <article className="card" data-testid="password">
      <h2>Password</h2>
      <form onSubmit={submit} noValidate>
        <TextField name="current_password" label="Current password" type="password" autoComplete="current-password" errors={fieldErrors} />
        <TextField name="new_password" label="New password" type="password" autoComplete="new-password" errors={fieldErrors} />
        <p className="hint">Every session ends with the change, this one too: you sign in again with the new password.</p>
        <button type="submit" disabled={change.isPending}>
          Change password
        </button>
      </form>
      <ErrorNotice error={change.error} />
    </article>
  );
};

const Sessions = () => {
  const readAgain = () => queryClient.invalidateQueries(trpc.auth.sessions.pathFilter());
  const sessions = useQuery(trpc.auth.sessions.queryOptions({ page: 1, size: 100 }));
  const revoke = useMutation(trpc.auth.revokeSession.mutationOptions({ onSettled: readAgain }));
  const revokeOthers = useMutation(trpc.auth.revokeOtherSessions.mutationOptions({ onSettled: readAgain }));
  const others = sessions.data?.items.filter((each) => !each.current).length ?? 0;
  return (
    <article className="card wide" data-testid="sessions">
      <h2>Sessions</h2>
      <p className="hint">One per sign-in (a browser, a script). Ending one stops its refreshes at once; an access token it already holds lasts until it expires.</p>
      <table>
        <thead>
          <tr>
            <th>Signed in</th>
            <th>Last refreshed</th>
            <th>Ends</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {sessions.data?.items.map((each) => (
            <tr key={each.id} data-testid="session-row">
              <td>{when(each.created_at)}</td>
              <td>{when(each.last_used_at)}</td>
              <td>{when(each.expires_at)}</td>
              <td>
                {each.current ? (
                  <strong data-testid="current-session">this session</strong>
                ) : (
                  <button type="button" data-testid="end-session" disabled={revoke.isPending} onClick={() => revoke.mutate({ id: each.id })}>
                    End
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" data-testid="end-others" disabled={others === 0 || revokeOthers.isPending} onClick={() => revokeOthers.mutate()}>
        End every other session
      </button>
      <DoneNotice text={revokeOthers.data ? `${revokeOthers.data.revoked} other session(s) ended.` : undefined} />
      <ErrorNotice error={sessions.error ?? revoke.error ?? revokeOthers.error} />
    </article>
  );
};

export const Settings = () => (
  <section>
    <h1>Settings</h1>
    <div className="cards">
      <PasswordForm />
      <Sessions />
    </div>
  </section>
);
