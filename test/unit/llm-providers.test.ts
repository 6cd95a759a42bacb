// The OpenAI and Anthropic clients against a fake provider on 127.0.0.1 speaking their wire
// formats: what they send, what they read, how they retry, and how each failure is named.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAnthropicClient } from '../../server/analysis/llm/anthropic.ts';
import { retryAfterMs, type ProviderClientOptions } from '../../server/analysis/llm/http.ts';
import { createOpenAiClient } from '../../server/analysis/llm/openai.ts';
import { costOf, parseModelPrices } from '../../server/analysis/llm/pricing.ts';
import { LlmError, type LlmCall, type LlmClient, type TModelPrices } from '../../server/analysis/types.ts';
import { startFakeLlm, type FakeAnswer, type FakeLlm } from '../support/fake-llm.ts';

const API_KEY = 'sk-test-0123456789-very-secret';
const prices: TModelPrices = {
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'claude-sonnet-4-5': { input: 3, output: 15 },
};

const call = (overrides: Partial<LlmCall> = {}): LlmCall => ({
  system: 'You are the technical analyst. Answer JSON.',
  user: '{"symbol":"AAPL"}',
  maxOutputTokens: 800,
  timeoutMs: 5_000,
  ...overrides,
});

/** Something the caller of `promise` can inspect: the LlmError it rejected with. */
const failureOf = async (promise: Promise<unknown>): Promise<LlmError> => {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(LlmError);
    return error as LlmError;
  }
  throw new Error('expected the call to fail');
};

let fake: FakeLlm | undefined;
const startFake = async (answer?: (nth: number) => FakeAnswer) => {
  fake = await startFakeLlm(answer ? { answer } : {});
  return fake;
};

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

type ClientOverrides = Partial<ProviderClientOptions>;

const providers = [
  {
    provider: 'openai' as const,
    path: '/v1/chat/completions',
    model: 'gpt-4o-mini',
    // The trailing slash is tolerated.
    create: (url: string, overrides: ClientOverrides = {}): LlmClient =>
      createOpenAiClient({ baseUrl: `${url}/v1/`, apiKey: API_KEY, model: 'gpt-4o-mini', prices, timeoutMs: 5_000, maxRetries: 2, backoff: { baseMs: 1, maxMs: 5 }, random: () => 0, ...overrides }),
  },
  {
    provider: 'anthropic' as const,
    path: '/v1/messages',
    model: 'claude-sonnet-4-5',
    create: (url: string, overrides: ClientOverrides = {}): LlmClient =>
      createAnthropicClient({ baseUrl: url, apiKey: API_KEY, model: 'claude-sonnet-4-5', prices, timeoutMs: 5_000, maxRetries: 2, backoff: { baseMs: 1, maxMs: 5 }, random: () => 0, ...overrides }),
  },
];

describe('OpenAI client', () => {
  it('answers the text, the tokens, the answered model and its cost by the family price', async () => {
    const server = await startFake(() => ({ json: '{"signal":"buy"}', tokensInput: 1_000, tokensOutput: 500, model: 'gpt-4o-mini-2024-07-18' }));
    const answer = await providers[0]!.create(server.url).complete(call());
    expect(answer).toMatchObject({ text: '{"signal":"buy"}', tokensInput: 1_000, tokensOutput: 500, model: 'gpt-4o-mini-2024-07-18', attempts: 1 });
    // (1000 × 0.15 + 500 × 0.6) / 1e6
    expect(answer.costUsd).toBeCloseTo(0.000_45, 12);
    expect(answer.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('sends the chat-completions request, the key only in its Authorization header', async () => {
    const server = await startFake();
    const client = providers[0]!.create(server.url);
    expect(client).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini' });
    await client.complete(call());
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/v1/chat/completions');
    expect(request!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are the technical analyst. Answer JSON.' },
        { role: 'user', content: '{"symbol":"AAPL"}' },
      ],
      max_tokens: 800,
      temperature: 0,
      response_format: { type: 'json_object' },
    });
    const { authorization: _authorization, ...otherHeaders } = request!.headers;
    expect(JSON.stringify(otherHeaders)).not.toContain(API_KEY);
    expect(JSON.stringify(request!.body)).not.toContain(API_KEY);
  });

  it('counts and prices the tokens of a completion without content (a refusal)', async () => {
    const server = await startFake(() => ({
      status: 200,
      body: { model: 'gpt-4o-2024-08-06', choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: 'no' } }], usage: { prompt_tokens: 100, completion_tokens: 20 } },
    }));
    const error = await failureOf(providers[0]!.create(server.url).complete(call()));
    expect(error.kind).toBe('malformed');
    expect(error.message).toContain('text');
    expect(error).toMatchObject({ tokensInput: 100, tokensOutput: 20 });
    // (100 × 2.5 + 20 × 10) / 1e6
    expect(error.costUsd).toBeCloseTo(0.000_45, 12);
  });
});

describe('Anthropic client', () => {
  it('answers the joined text blocks, the tokens, the answered model and its cost by the family price', async () => {
    const server = await startFake(() => ({
      status: 200,
      body: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5-20250929',
        content: [
          { type: 'text', text: '{"signal":' },
          { type: 'thinking', thinking: 'not part of the reply' },
          { type: 'text', text: '"sell"}' },
        ],
        stop_reason: 'end_turn',
        usage: { input_tokens: 1_000, output_tokens: 500 },
      },
    }));
    const answer = await providers[1]!.create(server.url).complete(call());
    expect(answer).toMatchObject({ text: '{"signal":"sell"}', tokensInput: 1_000, tokensOutput: 500, model: 'claude-sonnet-4-5-20250929', attempts: 1 });
    // (1000 × 3 + 500 × 15) / 1e6
    expect(answer.costUsd).toBe(0.010_5);
  });

  it('sends the Messages request with its version header, the key only in x-api-key', async () => {
    const server = await startFake();
    // The trailing slash is tolerated.
    const client = providers[1]!.create(`${server.url}/`);
    expect(client).toMatchObject({ provider: 'anthropic', model: 'claude-sonnet-4-5' });
    await client.complete(call());
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/v1/messages');
    expect(request!.headers['x-api-key']).toBe(API_KEY);
    expect(request!.headers['anthropic-version']).toBe('2023-06-01');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers.authorization).toBeUndefined();
    expect(request!.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 800,
      system: 'You are the technical analyst. Answer JSON.',
      messages: [{ role: 'user', content: '{"symbol":"AAPL"}' }],
      temperature: 0,
    });
    const { 'x-api-key': _key, ...otherHeaders } = request!.headers;
    expect(JSON.stringify(otherHeaders)).not.toContain(API_KEY);
    expect(JSON.stringify(request!.body)).not.toContain(API_KEY);
  });

  it('retries an overloaded provider (529)', async () => {
    const server = await startFake((nth) => (nth === 1 ? { status: 529 } : { json: '{}' }));
    const answer = await providers[1]!.create(server.url).complete(call());
    expect(answer.attempts).toBe(2);
    expect(server.requests).toHaveLength(2);
  });
});

describe.each(providers)('$provider client, failures and retries', ({ create, path, model }) => {
  it('answers with the default script: content {}, usage 10 / 5, the requested model', async () => {
    const server = await startFake();
    const answer = await create(server.url).complete(call());
    expect(answer).toMatchObject({ text: '{}', tokensInput: 10, tokensOutput: 5, model, attempts: 1 });
    expect(answer.costUsd).toBeCloseTo(costOf(prices, model, { tokensInput: 10, tokensOutput: 5 }), 15);
    expect(server.requests.map((request) => request.path)).toEqual([path]);
  });

  it('prices an unknown model at 0', async () => {
    const server = await startFake(() => ({ json: '{}', model: 'someone-elses-model' }));
    const answer = await create(server.url).complete(call());
    expect(answer).toMatchObject({ model: 'someone-elses-model', costUsd: 0 });
  });

  it('waits as Retry-After says after a 429, then succeeds on the second attempt', async () => {
    const server = await startFake((nth) => (nth === 1 ? { status: 429, retryAfter: '0' } : { json: '{"ok":true}' }));
    // A backoff wait far past the call's budget: only honouring Retry-After: 0 lets the retry in.
    const answer = await create(server.url, { backoff: { baseMs: 60_000, maxMs: 60_000 } }).complete(call());
    expect(answer).toMatchObject({ text: '{"ok":true}', attempts: 2 });
    expect(server.requests).toHaveLength(2);
  });

  it('retries a 503, then succeeds', async () => {
    const server = await startFake((nth) => (nth === 1 ? { status: 503 } : { json: '{}' }));
    const answer = await create(server.url).complete(call());
    expect(answer.attempts).toBe(2);
    expect(server.requests).toHaveLength(2);
  });

  it('gives up with the last status after its retries', async () => {
    const server = await startFake(() => ({ status: 500 }));
    const error = await failureOf(create(server.url, { maxRetries: 2 }).complete(call()));
    expect(error).toMatchObject({ kind: 'http', status: 500 });
    expect(server.requests).toHaveLength(3);
  });

  it('fails a 400 at once, with its status and without the key, even when the provider echoes it', async () => {
    const server = await startFake(() => ({ status: 400, body: { error: { message: `bad request for key ${API_KEY}`, type: 'invalid_request_error' } } }));
    const error = await failureOf(create(server.url).complete(call()));
    expect(error).toMatchObject({ kind: 'http', status: 400 });
    expect(error.message).toContain('bad request for key');
    expect(error.message).not.toContain(API_KEY);
    expect(error.message).not.toContain('Bearer');
    expect(error.stack ?? '').not.toContain(API_KEY);
    expect(server.requests).toHaveLength(1);
  });

  it('times out a provider that never answers', async () => {
    const server = await startFake(() => 'hang');
    const error = await failureOf(create(server.url).complete(call({ timeoutMs: 200 })));
    expect(error.kind).toBe('timeout');
    expect(server.requests).toHaveLength(1);
  });

  it('is bounded by the client timeout when the call allows more', async () => {
    const server = await startFake(() => 'hang');
    const error = await failureOf(create(server.url, { timeoutMs: 200 }).complete(call({ timeoutMs: 60_000 })));
    expect(error.kind).toBe('timeout');
  });

  it('times out rather than wait a Retry-After past the budget', async () => {
    const server = await startFake(() => ({ status: 429, retryAfter: '3600' }));
    const error = await failureOf(create(server.url).complete(call({ timeoutMs: 200 })));
    expect(error.kind).toBe('timeout');
    expect(server.requests).toHaveLength(1);
  });

  it('names an answer that is not JSON, or not the provider shape, malformed', async () => {
    const server = await startFake((nth) => ({ status: 200, body: nth === 1 ? 'upstream says hello' : { unexpected: true } }));
    const client = create(server.url);
    const notJson = await failureOf(client.complete(call()));
    expect(notJson.kind).toBe('malformed');
    const wrongShape = await failureOf(client.complete(call()));
    expect(wrongShape).toMatchObject({ kind: 'malformed', tokensInput: 0, tokensOutput: 0, costUsd: 0 });
    // Malformed is not retried here: the orchestrator decides whether to ask again.
    expect(server.requests).toHaveLength(2);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const server = await startFake();
    const error = await failureOf(create(server.url).complete(call({ signal: AbortSignal.abort() })));
    expect(error.kind).toBe('aborted');
    expect(server.requests).toHaveLength(0);
  });

  it('stops a request under way when the signal aborts', async () => {
    const controller = new AbortController();
    const server = await startFake(() => {
      controller.abort();
      return 'hang';
    });
    const error = await failureOf(create(server.url).complete(call({ signal: controller.signal })));
    expect(error.kind).toBe('aborted');
    expect(server.requests).toHaveLength(1);
  });

  it('stops a wait between attempts when the signal aborts', async () => {
    const controller = new AbortController();
    const server = await startFake(() => {
      controller.abort();
      return { status: 503 };
    });
    const error = await failureOf(create(server.url, { backoff: { baseMs: 60_000, maxMs: 60_000 } }).complete(call({ signal: controller.signal, timeoutMs: 120_000 })));
    expect(error.kind).toBe('aborted');
    expect(server.requests).toHaveLength(1);
  });

  it('names an unreachable provider a network failure after its retries', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await failureOf(create(`http://127.0.0.1:${port}`, { maxRetries: 1 }).complete(call()));
    expect(error.kind).toBe('network');
    expect(error.message).not.toContain(API_KEY);
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2026-03-09T13:30:00Z');
  it('reads seconds, an HTTP date, and OpenAI retry-after-ms', () => {
    expect(retryAfterMs(new Headers({ 'retry-after': '0' }), now)).toBe(0);
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }), now)).toBe(2_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Mon, 09 Mar 2026 13:30:03 GMT' }), now)).toBe(3_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Mon, 09 Mar 2026 13:29:00 GMT' }), now)).toBe(0);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '1' }), now)).toBe(250);
  });

  it('asks for nothing when the header is absent or unreadable', () => {
    expect(retryAfterMs(new Headers(), now)).toBeUndefined();
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
  });
});

describe('costOf', () => {
  it('prices an exact model id per million tokens', () => {
    expect(costOf(prices, 'claude-sonnet-4-5', { tokensInput: 2_000_000, tokensOutput: 1_000_000 })).toBe(21);
    expect(costOf(prices, 'gpt-4o', { tokensInput: 1_000, tokensOutput: 0 })).toBe(0.002_5);
  });

  it('prices a dated id by the longest configured prefix', () => {
    expect(costOf(prices, 'gpt-4o-mini-2024-07-18', { tokensInput: 1_000_000, tokensOutput: 1_000_000 })).toBeCloseTo(0.75, 12);
    expect(costOf(prices, 'gpt-4o-2024-08-06', { tokensInput: 1_000_000, tokensOutput: 1_000_000 })).toBe(12.5);
  });

  it('prices an unknown model at 0', () => {
    expect(costOf(prices, 'o3', { tokensInput: 1_000, tokensOutput: 1_000 })).toBe(0);
    expect(costOf({}, 'gpt-4o-mini', { tokensInput: 1_000, tokensOutput: 1_000 })).toBe(0);
  });
});

describe('parseModelPrices', () => {
  it('reads a JSON object of model id to input and output prices', () => {
    expect(parseModelPrices('{"gpt-4o-mini":{"input":0.15,"output":0.6},"free":{"input":0,"output":0}}')).toEqual({
      'gpt-4o-mini': { input: 0.15, output: 0.6 },
      free: { input: 0, output: 0 },
    });
    expect(parseModelPrices('{}')).toEqual({});
  });

  it.each([
    ['not JSON', '{gpt', /not valid JSON/],
    ['an array', '[]', /must be a JSON object/],
    ['null', 'null', /must be a JSON object/],
    ['a number', '3', /must be a JSON object/],
    ['an entry that is not an object', '{"gpt-4o":1}', /"gpt-4o" must be an object/],
    ['a missing output', '{"gpt-4o":{"input":1}}', /"gpt-4o"\.output must be .* \(got nothing\)/],
    ['a negative price', '{"gpt-4o":{"input":-1,"output":1}}', /"gpt-4o"\.input must be .*at least 0 \(got -1\)/],
    ['a price that is not finite', '{"gpt-4o":{"input":1,"output":1e999}}', /"gpt-4o"\.output must be a finite number/],
    ['a price in a string', '{"gpt-4o":{"input":"1","output":1}}', /"gpt-4o"\.input must be .* \(got "1"\)/],
    ['an empty model id', '{"":{"input":1,"output":1}}', /model id must not be empty/],
  ])('refuses %s', (_label, text, message) => {
    expect(() => parseModelPrices(text)).toThrow(message);
  });
});
