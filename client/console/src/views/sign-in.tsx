// Sign in and register: the product's card, centred (shell/public-layout.tsx), with its name and
// what it is for. Both forms check their input with the contracts' schemas first.
import { Anchor, Button, Paper, Stack, Text, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { ZUserLogin, ZUserRegister } from '@trading-service/client';
import { trpc } from '../api.ts';
import { ErrorNotice } from '../feedback.tsx';
import { checkedRequest, fieldErrorsOf, fieldText, TextField, type TFieldErrors } from '../forms.tsx';
import { navigate } from '../router.ts';
import { session } from '../session.ts';
import { Wordmark } from '../shell/wordmark.tsx';

const textOf = (form: HTMLFormElement, name: string) => fieldText(new FormData(form), name);

/** Login, keeping the tokens and opening the overview. */
const useLogin = () =>
  useMutation(
    trpc.auth.login.mutationOptions({
      onSuccess: async (tokens) => {
        await session.signIn(tokens);
        navigate('/', { replace: true });
      },
    }),
  );

const OtherPage = ({ question, to, title }: { question: string; to: string; title: string }) => (
  <Text size="sm" ta="center" c="dimmed">
    {question}{' '}
    <Anchor href={`/app${to}`} fw={500} onClick={(event) => (event.preventDefault(), navigate(to))}>
      {title}
    </Anchor>
  </Text>
);

/** The card both pages are: the wordmark, one line on what the product is, the page's title and form. */
const AuthCard = ({ title, children }: { title: string; children: ReactNode }) => (
  <Paper component="section" withBorder shadow="sm" radius="md" p="xl" className="auth-card">
    <Stack gap="lg">
      <Stack gap={6} align="center">
        <Wordmark size="lg" />
        <Text size="sm" c="dimmed" ta="center">
          Paper and live trading, backtests and analysis for crypto, US and Korean equities.
        </Text>
      </Stack>
      <Title order={1} size="h3" ta="center">
        {title}
      </Title>
      {children}
    </Stack>
  </Paper>
);

export const SignIn = () => {
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const login = useLogin();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const request = checkedRequest(ZUserLogin, { username: textOf(event.currentTarget, 'username'), password: textOf(event.currentTarget, 'password') }, setFieldErrors);
    if (request) login.mutate(request);
  };
  return (
    <AuthCard title="Sign in">
      <form onSubmit={submit} noValidate className="auth-form">
        <TextField name="username" label="Username" autoComplete="username" errors={fieldErrors} />
        <TextField name="password" label="Password" type="password" autoComplete="current-password" errors={fieldErrors} />
        <Button type="submit" size="sm" fullWidth disabled={login.isPending}>
          {login.isPending ? 'Signing in…' : 'Sign in'}
        </Button>
      </form>
      <ErrorNotice error={login.error} />
      <OtherPage question="No account yet?" to="/register" title="Register" />
    </AuthCard>
  );
};

export const Register = () => {
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const login = useLogin();
  const register = useMutation(trpc.auth.register.mutationOptions());
  const busy = register.isPending || login.isPending;
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const checked = ZUserRegister.safeParse({ username: textOf(form, 'username'), email: textOf(form, 'email'), password: textOf(form, 'password') });
    setFieldErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues));
    if (!checked.success) return;
    const { username, password } = checked.data;
    register.mutate(checked.data, { onSuccess: () => login.mutate({ username, password }) });
  };
  return (
    <AuthCard title="Register">
      <form onSubmit={submit} noValidate className="auth-form">
        <TextField name="username" label="Username" autoComplete="username" errors={fieldErrors} />
        <TextField name="email" label="E-mail" type="email" autoComplete="email" errors={fieldErrors} />
        <TextField name="password" label="Password" type="password" autoComplete="new-password" errors={fieldErrors} />
        <Button type="submit" size="sm" fullWidth disabled={busy}>
          {busy ? 'Registering…' : 'Register'}
        </Button>
      </form>
      <ErrorNotice error={register.error ?? login.error} />
      <OtherPage question="Have an account?" to="/signin" title="Sign in" />
    </AuthCard>
  );
};
