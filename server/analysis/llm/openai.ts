// The OpenAI provider: the chat-completions wire format, which many other endpoints speak too
// (the base URL is a setting), asked for a JSON object answer.
import type { LlmClient } from '../types.ts';
import { fieldsOf, joinUrl, loopOptionsOf, postJsonWithRetries, settleAnswer, tokenCountOf, type ProviderClientOptions, type WireAnswer } from './http.ts';

/** Reads `choices[0].message.content`, `usage` and `model` of a chat completion. */
const readChatCompletion = (body: unknown): WireAnswer => {
  const fields = fieldsOf(body);
  const choices = fields?.choices;
  const message = fieldsOf(fieldsOf(Array.isArray(choices) ? (choices[0] as unknown) : undefined)?.message);
  const usage = fieldsOf(fields?.usage);
  return {
    // A refusal answers `content: null`: there is no text to validate.
    text: typeof message?.content === 'string' ? message.content : undefined,
    tokensInput: tokenCountOf(usage?.prompt_tokens),
    tokensOutput: tokenCountOf(usage?.completion_tokens),
    model: typeof fields?.model === 'string' && fields.model !== '' ? fields.model : undefined,
  };
};

/** `baseUrl` as in `https://api.openai.com/v1`. */
export const createOpenAiClient = (options: ProviderClientOptions): LlmClient => {
  const url = joinUrl(options.baseUrl, '/chat/completions');
  const headers = { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' };
  return {
    provider: 'openai',
    model: options.model,
    complete: async (call) => {
      const result = await postJsonWithRetries({
        url,
        headers,
        body: {
          model: options.model,
          messages: [
            { role: 'system', content: call.system },
            { role: 'user', content: call.user },
          ],
          max_tokens: call.maxOutputTokens,
          // The agents want the same reading of the same numbers, not variety.
          temperature: 0,
          response_format: { type: 'json_object' },
        },
        ...loopOptionsOf(options, call),
      });
      return settleAnswer({ provider: 'openai', requestedModel: options.model, prices: options.prices }, readChatCompletion(result.body), result);
    },
  };
};
