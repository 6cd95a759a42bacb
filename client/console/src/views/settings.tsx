// Settings: the password (changing it ends every session, this one too), the sessions of the
// account, one per sign-in, with the current one marked: end one, or every other one; and the
// personal API keys (api-keys.tsx) and the notification channels (notifications.tsx).
import { Badge, Button, Stack, Table, VisuallyHidden } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZPasswordChange } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { checkedRequest, fieldText, type TFieldErrors } from '../forms.tsx';
import { navigate } from '../router.ts';
import { session } from '../session.ts';
import { when } from '../format.ts';
import { DataTable, Field, Hint, Page, Panel, RowActions } from './page-kit.tsx';
import { ApiKeys } from './api-keys.tsx';
import { Notifications } from './notifications.tsx';
import { Webhooks } from './webhooks.tsx';

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
    const request = checkedRequest(ZPasswordChange, { current_password: fieldText(form, 'current_password'), new_password: fieldText(form, 'new_password') }, setFieldErrors);
    if (request) change.mutate(request);
  };
  return (
    <Panel title="Password" testId="password">
      <form className="pages-form" onSubmit={submit} noValidate>
        <Field name="current_password" label="Current password" type="password" autoComplete="current-password" errors={fieldErrors} />
        <Field name="new_password" label="New password" type="password" autoComplete="new-password" errors={fieldErrors} />
        <Hint>Every session ends with the change, this one too: you sign in again with the new password.</Hint>
        <div className="pages-actions">
          <Button type="submit" loading={change.isPending}>
            Change password
          </Button>
        </div>
      </form>
      <ErrorNotice error={change.error} />
    </Panel>
  );
};

const Sessions = () => {
  const readAgain = () => queryClient.invalidateQueries(trpc.auth.sessions.pathFilter());
  const sessions = useQuery(trpc.auth.sessions.queryOptions({ page: 1, size: 100 }));
  const revoke = useMutation(trpc.auth.revokeSession.mutationOptions({ onSettled: readAgain }));
  const revokeOthers = useMutation(trpc.auth.revokeOtherSessions.mutationOptions({ onSettled: readAgain }));
  const others = sessions.data?.items.filter((each) => !each.current).length ?? 0;
  return (
    <Panel
      title="Sessions"
      testId="sessions"
      aside={
        <Button variant="light" color="red" data-testid="end-others" disabled={others === 0} loading={revokeOthers.isPending} onClick={() => revokeOthers.mutate()}>
          End every other session
        </Button>
      }
    >
      <Stack gap="xs">
        <Hint>One per sign-in (a browser, a script). Ending one stops its refreshes at once; an access token it already holds lasts until it expires.</Hint>
        <DataTable label="Sessions">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Signed in</Table.Th>
              <Table.Th>Last refreshed</Table.Th>
              <Table.Th>Ends</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {sessions.data?.items.map((each) => (
              <Table.Tr key={each.id} data-testid="session-row">
                <Table.Td className="pages-nowrap">{when(each.created_at)}</Table.Td>
                <Table.Td className="pages-nowrap">{when(each.last_used_at)}</Table.Td>
                <Table.Td className="pages-nowrap">{when(each.expires_at)}</Table.Td>
                <RowActions>
                  {each.current ? (
                    <Badge component="span" variant="light" color="blue" data-testid="current-session">
                      this session
                    </Badge>
                  ) : (
                    <Button variant="default" data-testid="end-session" disabled={revoke.isPending} onClick={() => revoke.mutate({ id: each.id })}>
                      End
                    </Button>
                  )}
                </RowActions>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </DataTable>
        <DoneNotice text={revokeOthers.data ? `${revokeOthers.data.revoked} other session(s) ended.` : undefined} />
        <ErrorNotice error={sessions.error ?? revoke.error ?? revokeOthers.error} />
      </Stack>
    </Panel>
  );
};

export const Settings = () => (
  <Page title="Settings">
    <div className="pages-split">
      <PasswordForm />
      <Sessions />
    </div>
    <ApiKeys />
    <Notifications />
    <Webhooks />
  </Page>
);
