// The signed-in header: the product's name, who is signed in, the theme switch and sign-out.
import { Button, Group, Text } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { queryClient, trpc } from '../api.ts';
import { navigate } from '../router.ts';
import { session } from '../session.ts';
import { ColorSchemeToggle } from './color-scheme-toggle.tsx';
import { Wordmark } from './wordmark.tsx';

export const Header = () => {
  const me = useQuery(trpc.auth.me.queryOptions());
  const logout = useMutation(
    trpc.auth.logout.mutationOptions({
      // Signed out here whatever the server says: a refused logout must not keep the session.
      onSettled: () => (session.signOut(), queryClient.clear(), navigate('/signin', { replace: true })),
    }),
  );
  const signOut = () => {
    const refreshToken = session.refreshToken();
    if (refreshToken) logout.mutate({ refresh_token: refreshToken });
    else session.signOut();
  };
  return (
    <header className="shell-header">
      <Wordmark />
      <Group gap="xs" wrap="nowrap" className="shell-header-actions">
        <Text component="span" size="sm" fw={500} className="shell-user" data-testid="username">
          {me.data?.username}
        </Text>
        <ColorSchemeToggle />
        <Button variant="default" onClick={signOut} disabled={logout.isPending}>
          Sign out
        </Button>
      </Group>
    </header>
  );
};
