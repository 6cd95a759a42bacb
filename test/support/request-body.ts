// What the fake servers of the tests read of a request: its body as text, and as JSON when it is.
import type { IncomingMessage } from 'node:http';

export const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/** The body parsed as JSON, or the text itself when it is not JSON. */
export const parsedJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};
