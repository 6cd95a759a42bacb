// A logger whose output a test reads: every JSON line, and the raw text to grep for secrets.
import { Writable } from 'node:stream';
import { createLogger } from '../../server/observability/logger.ts';

export const capturedLogger = (level = 'info') => {
  const lines: Record<string, unknown>[] = [];
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const part = chunk.toString('utf8');
      text += part;
      for (const line of part.split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger(level, sink), lines, text: () => text };
};
