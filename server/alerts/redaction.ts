// What of a delivery failure may reach a log: the webhook's origin instead of its URL, and error
// messages with every known secret (SMTP password, the URL's path, query and user info) cut out.

export type Scrub = (text: string) => string;

/** Replaces each secret found in a text; the longest first, so a part never unmasks a whole. */
export const secretScrubber = (secrets: readonly string[]): Scrub => {
  const known = [...new Set(secrets.filter((secret) => secret.length > 0))].sort((a, b) => b.length - a.length);
  return (text) => known.reduce((scrubbed, secret) => scrubbed.split(secret).join('[redacted]'), text);
};

/**
 * The secret-bearing parts of a webhook URL. Slack and Discord put the token in the path
 * (/services/T…/B…/token, /api/webhooks/id/token), others in the query or user info: all of it
 * but the origin is treated as secret, in whole and by segment (a message may quote one).
 */
export const webhookSecrets = (url: URL): string[] => {
  // Short pieces ('v=1', '/api') carry no secret, and cutting them out would garble every message.
  const pieces = [...url.pathname.split('/'), ...url.searchParams.values()].filter((piece) => piece.length >= 6);
  const whole = [url.href, url.pathname.length > 1 ? url.pathname : '', url.search, url.hash, url.pathname + url.search];
  const userInfo = [url.username, url.password];
  return [...whole, ...userInfo, ...[...userInfo, ...pieces].flatMap((piece) => [piece, decoded(piece)])];
};

const decoded = (piece: string): string => {
  try {
    return decodeURIComponent(piece);
  } catch {
    return piece;
  }
};

/** How logs name a webhook: scheme, host and port only. */
export const webhookTarget = (url: URL): string => url.origin;
