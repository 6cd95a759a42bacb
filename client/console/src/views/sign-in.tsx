// Sign in and register. Both forms check their input with the contracts' schemas first.
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZUserLogin, ZUserRegister } from '@trading-service/client';
import { trpc } from '../api.ts';
import { ErrorNotice } from '../feedback.tsx';
import { fieldErrorsOf, fieldText, TextField, type TFieldErrors } from '../forms.tsx';
import { navigate } from '../router.ts';
import { session } from '../session.ts';

const textOf = (form: HTMLFormElement, name: string) => fieldText(new FormData(form), name);

/** Login, keeping the tokens and opening the overview. */
const useLogin = () => useMutation(trpc.auth.login.mutationOptions({ onSuccess: (tokens) => (session.signIn(tokens), navigate('/', { replace: true })) }));

const OtherPage = ({ question, to, title }: { question: string; to: string; title: string }) => (
  <p>
    {question}{' '}
    <a href={`/app${to}`} onClick={(event) => (event.preventDefault(), navigate(to))}>
      {title}
    </a>
  </p>
);

export const SignIn = () => {
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const login = useLogin();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const checked = ZUserLogin.safeParse({ username: textOf(event.currentTarget, 'username'), password: textOf(event.currentTarget, 'password') });
    setFieldErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues));
    if (checked.success) login.mutate(checked.data);
  };
  return (
    <section>
      <h1>Sign in</h1>
      <form onSubmit={submit} noValidate>
        <TextField name="username" label="Username" autoComplete="username" errors={fieldErrors} />
        <TextField name="password" label="Password" type="password" autoComplete="current-password" errors={fieldErrors} />
        <button type="submit" disabled={login.isPending}>
          {login.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorNotice error={login.error} />
      <OtherPage question="No account yet?" to="/register" title="Register" />
    </section>
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
    <section>
      <h1>Register</h1>
      <form onSubmit={submit} noValidate>
        <TextField name="username" label="Username" autoComplete="username" errors={fieldErrors} />
        <TextField name="email" label="E-mail" type="email" autoComplete="email" errors={fieldErrors} />
        <TextField name="password" label="Password" type="password" autoComplete="new-password" errors={fieldErrors} />
        <button type="submit" disabled={busy}>
          {busy ? 'Registering…' : 'Register'}
        </button>
      </form>
      <ErrorNotice error={register.error ?? login.error} />
      <OtherPage question="Have an account?" to="/signin" title="Sign in" />
    </section>
  );
};
