// An LLM provider on 127.0.0.1 for the analysis tests: speaks both the OpenAI chat-completions
// (`POST /v1/chat/completions`) and the Anthropic Messages (`POST /v1/messages`) wire formats,
// records every request and answers each as a test scripts (or never answers at all).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parsedJson, readBody } from './request-body.ts';

export interface FakeLlmRequest {
  path: string;
  method: string;
  /** Lower-cased names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: any;
}

/**
 * The answer to one request: a completion whose content is `json` (the text the model "wrote"),
 * an HTTP status (with the provider's error body unless `body` is given; a string `body` is sent
 * as is, so a test can send something that is not JSON), or 'hang' to hold the request open until
 * the server closes.
 */
export type FakeAnswer =
  | { json: string; tokensInput?: number; tokensOutput?: number; model?: string }
  | { status: number; retryAfter?: string; body?: unknown }
  | 'hang';

export interface FakeLlmOptions {
  /** The answer to the nth request (1-based). Default: content `{}`, usage 10 in / 5 out. */
  answer?: (nth: number, request: FakeLlmRequest) => FakeAnswer;
}

const OPENAI_PATH = '/v1/chat/completions';
const ANTHROPIC_PATH = '/v1/messages';

const completionBody = (path: string, nth: number, request: FakeLlmRequest, answer: Extract<FakeAnswer, { json: string }>) => {
  const model = answer.model ?? (typeof request.body?.model === 'string' ? request.body.model : 'fake-model');
  const tokensInput = answer.tokensInput ?? 10;
  const tokensOutput = answer.tokensOutput ?? 5;
  if (path === OPENAI_PATH) {
    return {
      id: `chatcmpl-fake-${nth}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1_000),
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: answer.json, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: tokensInput, completion_tokens: tokensOutput, total_tokens: tokensInput + tokensOutput },
    };
  }
  return {
    id: `msg_fake_${nth}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: answer.json }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: tokensInput, output_tokens: tokensOutput },
  };
};

/** The provider's own error shape, so a client reads a refusal as it would in production. */
const errorBody = (path: string, status: number) => {
  const message = `fake provider answered ${status}`;
  if (path === ANTHROPIC_PATH) {
    const type = status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
    return { type: 'error', error: { type, message } };
  }
  return { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } };
};

const send = (response: ServerResponse, status: number, body: unknown, extraHeaders: Record<string, string> = {}) => {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...extraHeaders }).end(text);
};

export const startFakeLlm = async (options: FakeLlmOptions = {}) => {
  const answerOf = options.answer ?? (() => ({ json: '{}' }));
  const requests: FakeLlmRequest[] = [];
  const server = createServer((request, response) => {
    void readBody(request).then((text) => {
      const path = request.url ?? '';
      const recorded: FakeLlmRequest = { path, method: request.method ?? '', headers: request.headers, body: parsedJson(text) };
      requests.push(recorded);
      if (request.method !== 'POST' || (path !== OPENAI_PATH && path !== ANTHROPIC_PATH)) {
        send(response, 404, errorBody(path, 404));
        return;
      }
      const answer = answerOf(requests.length, recorded);
      if (answer === 'hang') return;
      if ('json' in answer) {
        send(response, 200, completionBody(path, requests.length, recorded, answer));
        return;
      }
      send(response, answer.status, answer.body ?? errorBody(path, answer.status), answer.retryAfter === undefined ? {} : { 'retry-after': answer.retryAfter });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** The server's root: the Anthropic base URL as is, the OpenAI one with `/v1` appended. */
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      // Hanging requests hold their sockets open; without this, close() would wait on them.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

export type FakeLlm = Awaited<ReturnType<typeof startFakeLlm>>;
