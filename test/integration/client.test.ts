// The typed client of client/index.ts against the running server: tRPC calls with a fixed or
// per-request token, the domain code of every error through errorCodeOf, and the REST helper.
import { TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTradingClient, errorCodeOf, TradingApiError, type TradingClient, type TTokenResponse, type TUserResponse } from '../../client/index.ts';
import { manualClock } from '../../server/clock.ts';
import { registerAndLogin, startTestServer, uniqueName, type TestServer, type TestUser } from '../support/server.ts';

let server: TestServer;
let alice: TestUser;
let client: TradingClient;
let anonymous: TradingClient;

beforeAll(async () => {
  server = await startTestServer();
  alice = await registerAndLogin(server, 'client');
  client = createTradingClient({ url: server.url, token: alice.tokens.access_token });
  anonymous = createTradingClient({ url: server.url });
});
afterAll(() => server?.stop());

/** The error a promise rejects with (fails the test when it resolves). */
const rejectionOf = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
};

const registration = (prefix: string) => {
  const username = uniqueName(prefix);
  return { username, email: `${username}@example.com`, password: 'password123' };
};

describe('tRPC through the typed client', () => {
  it('auth.me returns the current user', async () => {
    expect(await client.trpc.auth.me.query()).toEqual(alice.user);
  });

  it('splits more calls than the server takes in one batch (TRPC_MAX_BATCH_SIZE, 50) over several requests', async () => {
    const answers = await Promise.all(Array.from({ length: 120 }, () => client.trpc.auth.me.query()));
    expect(answers).toHaveLength(120);
    expect(answers.every((user) => user.id === alice.user.id)).toBe(true);
  });

  it('auth.register creates a user', async () => {
    const input = registration('creg');
    const created = await anonymous.trpc.auth.register.mutate(input);
    expect(created).toEqual({
      id: expect.any(Number),
      username: input.username,
      email: input.email,
      role: 'user',
      is_active: true,
      created_at: expect.any(String),
    });
    // Timestamps travel as ISO strings, as they do over REST.
    expect(typeof created.created_at).toBe('string');
    const tokens = await anonymous.trpc.auth.login.mutate({ username: input.username, password: input.password });
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: expect.any(Number) });
    const asNewUser = createTradingClient({ url: server.url, token: tokens.access_token });
    expect(await asNewUser.trpc.auth.me.query()).toEqual(created);
  });

  it('a wrong password is a TRPCClientError with code UNAUTHORIZED', async () => {
    const error = await rejectionOf(anonymous.trpc.auth.login.mutate({ username: alice.username, password: 'not-the-password' }));
    expect(error).toBeInstanceOf(TRPCClientError);
    expect(errorCodeOf(error)).toBe('UNAUTHORIZED');
    expect((error as TRPCClientError<any>).data).toMatchObject({ httpStatus: 401 });
  });

  it('a call without a token is UNAUTHORIZED', async () => {
    expect(errorCodeOf(await rejectionOf(anonymous.trpc.auth.me.query()))).toBe('UNAUTHORIZED');
  });

  it('a duplicate register is CONFLICT', async () => {
    const input = registration('cdup');
    await anonymous.trpc.auth.register.mutate(input);
    const error = await rejectionOf(anonymous.trpc.auth.register.mutate({ ...input, email: `other_${input.email}` }));
    expect(error).toBeInstanceOf(TRPCClientError);
    expect(errorCodeOf(error)).toBe('CONFLICT');
  });

  it('invalid input is VALIDATION_ERROR with field errors', async () => {
    const error = await rejectionOf(anonymous.trpc.auth.register.mutate({ username: 'x', email: 'not-an-email', password: 'short' }));
    expect(error).toBeInstanceOf(TRPCClientError);
    expect(errorCodeOf(error)).toBe('VALIDATION_ERROR');
    const data = (error as TRPCClientError<any>).data;
    expect(data.httpStatus).toBe(422);
    expect(data.errors.map((e: { path: string }) => e.path)).toEqual(expect.arrayContaining(['username', 'email', 'password']));
    expect(JSON.stringify(data)).not.toMatch(/stack|\.ts:\d+/);
  });

  it('calls batched into one request keep each outcome and its code', async () => {
    const [me, login] = await Promise.allSettled([
      client.trpc.auth.me.query(),
      client.trpc.auth.login.mutate({ username: alice.username, password: 'not-the-password' }),
    ]);
    expect(me).toMatchObject({ status: 'fulfilled', value: alice.user });
    expect(login.status).toBe('rejected');
    expect(errorCodeOf((login as PromiseRejectedResult).reason)).toBe('UNAUTHORIZED');
  });

  it('asks getToken before every request', async () => {
    let calls = 0;
    const session: { token: string | undefined } = { token: undefined };
    const refreshing = createTradingClient({
      url: server.url,
      getToken: () => {
        calls++;
        return session.token;
      },
    });
    expect(errorCodeOf(await rejectionOf(refreshing.trpc.auth.me.query()))).toBe('UNAUTHORIZED');
    expect(calls).toBe(1);
    // A token handed in later is used by the next request.
    session.token = alice.tokens.access_token;
    expect(await refreshing.trpc.auth.me.query()).toEqual(alice.user);
    expect(calls).toBe(2);
    expect(await refreshing.trpc.auth.me.query()).toEqual(alice.user);
    expect(calls).toBe(3);
    expect(await refreshing.rest.get('/api/auth/me')).toEqual(alice.user);
    expect(calls).toBe(4);
  });

  it('accepts an async getToken', async () => {
    let calls = 0;
    const asyncToken = createTradingClient({
      url: server.url,
      getToken: async () => {
        calls++;
        return Promise.resolve(alice.tokens.access_token);
      },
    });
    expect(await asyncToken.trpc.auth.me.query()).toEqual(alice.user);
    expect(calls).toBe(1);
  });
});

describe('the REST helper', () => {
  it('rest.get returns the parsed body', async () => {
    expect(await client.rest.get('/api/auth/me')).toEqual(alice.user);
  });

  it('rest.post rejects with TradingApiError carrying code and status', async () => {
    const error = await rejectionOf(anonymous.rest.post('/api/auth/login', { username: alice.username, password: 'not-the-password' }));
    expect(error).toBeInstanceOf(TradingApiError);
    expect(error).toMatchObject({ code: 'UNAUTHORIZED', status: 401, name: 'TradingApiError' });
    expect(errorCodeOf(error)).toBe('UNAUTHORIZED');
  });

  it('a REST validation error carries its field errors', async () => {
    const error = await rejectionOf(anonymous.rest.post('/api/auth/register', {}));
    expect(error).toBeInstanceOf(TradingApiError);
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', status: 422 });
    expect((error as TradingApiError).errors?.map((e) => e.path)).toEqual(expect.arrayContaining(['username', 'email', 'password']));
  });

  it('rest.post returns the created resource, and undefined for a 204', async () => {
    const input = registration('crest');
    const created = await anonymous.rest.post<{ username: string }>('/api/auth/register', input);
    expect(created.username).toBe(input.username);
    const tokens = await anonymous.rest.post<{ access_token: string; refresh_token: string }>('/api/auth/login', {
      username: input.username,
      password: input.password,
    });
    const asNewUser = createTradingClient({ url: server.url, token: tokens.access_token });
    expect(await asNewUser.rest.post('/api/auth/logout', { refresh_token: tokens.refresh_token })).toBeUndefined();
  });

  it('rest.get sends query parameters', async () => {
    const error = await rejectionOf(client.rest.get('/api/admin/users', { page: 1, size: 5 }));
    // alice is not an admin: the route exists and refuses her.
    expect(error).toMatchObject({ code: 'FORBIDDEN', status: 403 });
  });
});

describe('/trpc on the wire', () => {
  it('answers a 422 domain error with HTTP 422', async () => {
    const res = await fetch(`${server.url}/trpc/auth.register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ json: { username: 'x', email: 'nope', password: 'short' } }),
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as any;
    expect(body.error.json.data).toMatchObject({ domainCode: 'VALIDATION_ERROR', httpStatus: 422 });
  });

  it.each([
    ['a wrong password', 'auth.login', { username: 'nobody_at_all', password: 'whatever123' }, 401, 'UNAUTHORIZED'],
    ['a duplicate register', 'auth.register', null, 409, 'CONFLICT'],
  ])('answers %s with its domain status', async (_what, procedure, input, status, code) => {
    const body = input ?? { username: alice.username, email: `again_${alice.username}@example.com`, password: 'password123' };
    const res = await fetch(`${server.url}/trpc/${procedure}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ json: body }),
    });
    expect(res.status).toBe(status);
    expect(((await res.json()) as any).error.json.data.domainCode).toBe(code);
  });
});

describe('a session the client keeps alive (session option)', () => {
  // The service's clock, to let an access token expire; the client's own is `clientNow`.
  const clock = manualClock('2026-03-10T01:00:00Z');
  let timed: TestServer;
  beforeAll(async () => {
    timed = await startTestServer({}, undefined, { clock });
  });
  afterAll(() => timed?.stop());

  const sessionClient = async (prefix: string, clientNow = () => 0) => {
    const user = await registerAndLogin(timed, prefix);
    const kept: TTokenResponse[] = [];
    let ended = 0;
    const sessionOf = createTradingClient({ url: timed.url, session: { tokens: user.tokens, onTokens: (tokens) => kept.push(tokens), onEnded: () => ended++, now: clientNow } });
    return { user, client: sessionOf, kept, ended: () => ended };
  };

  it('refreshes once for all the requests its expired token met, and sends each of them again', async () => {
    const { user, client: sessionOf, kept } = await sessionClient('csess');
    expect((await sessionOf.rest.get<TUserResponse>('/api/auth/me')).id).toBe(user.user.id);
    clock.advance((user.tokens.expires_in + 60) * 1000);
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, () => sessionOf.rest.get<TUserResponse>('/api/auth/me')),
      ...Array.from({ length: 4 }, () => sessionOf.trpc.auth.me.query()),
    ]);
    expect(answers.map((answer) => answer.id)).toEqual(Array.from({ length: 12 }, () => user.user.id));
    // One rotation: a second one would have presented the spent refresh token and ended the session.
    expect(kept).toHaveLength(1);
    expect(kept[0]!.refresh_token).not.toBe(user.tokens.refresh_token);
    const spent = await timed.http('POST', '/api/auth/refresh', { body: { refresh_token: user.tokens.refresh_token } });
    expect(spent.status).toBe(401);
  });

  it('refreshes before the access token expires, by its own clock', async () => {
    let clientNow = 0;
    const { user, client: sessionOf, kept } = await sessionClient('cearly', () => clientNow);
    await sessionOf.rest.get('/api/auth/me');
    expect(kept).toHaveLength(0);
    // Within the last 30 s of the token's life, as the client counts it.
    clientNow = user.tokens.expires_in * 1000 - 10_000;
    expect((await sessionOf.trpc.auth.me.query()).id).toBe(user.user.id);
    expect(kept).toHaveLength(1);
  });

  it('ends when the service refuses the refresh token, and the request fails with its 401', async () => {
    const { user, client: sessionOf, kept, ended } = await sessionClient('cend');
    // Someone else spent the refresh token: the client's rotation presents it again and is refused.
    expect((await timed.http('POST', '/api/auth/refresh', { body: { refresh_token: user.tokens.refresh_token } })).status).toBe(200);
    clock.advance((user.tokens.expires_in + 60) * 1000);
    const error = await rejectionOf(sessionOf.rest.get('/api/auth/me'));
    expect(error).toBeInstanceOf(TradingApiError);
    expect((error as TradingApiError).status).toBe(401);
    expect(kept).toHaveLength(0);
    expect(ended()).toBe(1);
    // A wrong password at login is about the credentials: no refresh is tried for it.
    const login = await rejectionOf(sessionOf.rest.post('/api/auth/login', { username: user.username, password: 'wrong-password' }));
    expect((login as TradingApiError).status).toBe(401);
    expect(ended()).toBe(1);
  });
});
