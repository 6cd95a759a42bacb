// The Anthropic provider: the Messages API, the system prompt in its own field and the answer
// as content blocks, of which the text ones are the reply.
import type { LlmClient } from '../types.ts';
import { fieldsOf, joinUrl, loopOptionsOf, postJsonWithRetries, settleAnswer, tokenCountOf, type ProviderClientOptions, type WireAnswer } from './http.ts';

const ANTHROPIC_VERSION = '2023-06-01';

/** Joins the `text` blocks of `content` (other block types carry no reply), with `usage` and `model`. */
const readMessage = (body: unknown): WireAnswer => {
  const fields = fieldsOf(body);
  const blocks = Array.isArray(fields?.content) ? (fields.content as unknown[]).map(fieldsOf) : [];
  const texts = blocks.flatMap((block) => (block?.type === 'text' && typeof block.text === 'string' ? [block.text] : []));
  const usage = fieldsOf(fields?.usage);
  return {
    text: texts.length > 0 ? texts.join('') : undefined,
    tokensInput: tokenCountOf(usage?.input_tokens),
    tokensOutput: tokenCountOf(usage?.output_tokens),
    model: typeof fields?.model === 'string' && fields.model !== '' ? fields.model : undefined,
  };
};

/** `baseUrl` as in `https://api.anthropic.com` (the client adds `/v1/messages`). */
export const createAnthropicClient = (options: ProviderClientOptions): LlmClient => {
  const url = joinUrl(options.baseUrl, '/v1/messages');
  const headers = { 'x-api-key': options.apiKey, 'anthropic-version': ANTHROPIC_VERSION, 'content-type': 'application/json' };
  return {
    provider: 'anthropic',
    model: options.model,
    complete: async (call) => {
      const result = await postJsonWithRetries({
        url,
        headers,
        body: {
          model: options.model,
          max_tokens: call.maxOutputTokens,
          system: call.system,
          messages: [{ role: 'user', content: call.user }],
          // The agents want the same reading of the same numbers, not variety.
          temperature: 0,
        },
        ...loopOptionsOf(options, call),
      });
      return settleAnswer({ provider: 'anthropic', requestedModel: options.model, prices: options.prices }, readMessage(result.body), result);
    },
  };
};
