// The notification channels' SSRF guard: which addresses are public, what each kind may reach,
// what NOTIFY_HOSTS and NOTIFY_ALLOW_PRIVATE open, and that a name is judged by every address it
// resolves to (the one judged is the one connected to). Names are resolved by a stub here.
import { describe, expect, it } from 'vitest';
import { checkDestination, isPublicAddress, type Resolve } from '../../server/notifications/destinations.ts';

const strict = { trustedHosts: [], allowPrivate: false };
const resolveTo =
  (...addresses: string[]): Resolve =>
  () =>
    Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) })));

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', true],
    ['1.1.1.1', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['10.20.30.40', false],
    ['172.31.255.255', false],
    ['172.32.0.1', true],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['100.128.0.1', true],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['::1', false],
    ['::', false],
    ['fd12:3456::1', false],
    ['fe80::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:8.8.8.8', true],
    ['64:ff9b::a00:1', false],
    ['2002:a00:1::1', false],
    ['not-an-address', false],
  ])('%s → %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('checkDestination', () => {
  it('lets a webhook reach a public https address, pinned to the address judged', async () => {
    const destination = await checkDestination({ kind: 'webhook', url: 'https://hooks.example.com/x', rules: strict, resolve: resolveTo('93.184.216.34') });
    expect(destination.address).toEqual({ address: '93.184.216.34', family: 4 });
  });

  it('refuses a name when any of its addresses is private (a rebinding answer among public ones)', async () => {
    await expect(checkDestination({ kind: 'webhook', url: 'https://hooks.example.com/x', rules: strict, resolve: resolveTo('93.184.216.34', '10.0.0.5') })).rejects.toThrow('is not a public address');
  });

  it('refuses a name that does not resolve', async () => {
    const failing: Resolve = () => Promise.reject(new Error('ENOTFOUND'));
    await expect(checkDestination({ kind: 'webhook', url: 'https://nowhere.invalid/x', rules: strict, resolve: failing })).rejects.toThrow('does not resolve');
  });

  it('with NOTIFY_ALLOW_PRIVATE lets a webhook reach private addresses over http, and still keeps chat kinds at their hosts', async () => {
    const open = { trustedHosts: [], allowPrivate: true };
    const destination = await checkDestination({ kind: 'webhook', url: 'http://10.0.0.5:8080/x', rules: open, resolve: resolveTo() });
    expect(destination.address.address).toBe('10.0.0.5');
    await expect(checkDestination({ kind: 'slack', url: 'http://10.0.0.5:8080/services/x', rules: open })).rejects.toThrow('must be at hooks.slack.com');
  });

  it('keeps Slack, Discord and Telegram at their own hosts over https, and judges their addresses too', async () => {
    const publicAddress = resolveTo('34.0.0.1');
    await expect(checkDestination({ kind: 'slack', url: 'https://hooks.slack.com/services/T/B/x', rules: strict, resolve: publicAddress })).resolves.toBeDefined();
    await expect(checkDestination({ kind: 'discord', url: 'https://discordapp.com/api/webhooks/1/x', rules: strict, resolve: publicAddress })).resolves.toBeDefined();
    await expect(checkDestination({ kind: 'telegram', url: 'https://api.telegram.org/bot1:x/sendMessage', rules: strict, resolve: publicAddress })).resolves.toBeDefined();
    await expect(checkDestination({ kind: 'telegram', url: 'https://api.telegram.org.evil.example/bot1:x/sendMessage', rules: strict, resolve: publicAddress })).rejects.toThrow('must be at api.telegram.org');
    await expect(checkDestination({ kind: 'slack', url: 'https://hooks.slack.com/services/x', rules: strict, resolve: resolveTo('127.0.0.1') })).rejects.toThrow('is not a public address');
  });

  it('opens exactly the NOTIFY_HOSTS entries (host, or host and port) to every kind', async () => {
    const rules = { trustedHosts: ['127.0.0.1:9000', 'relay.internal'], allowPrivate: false };
    await expect(checkDestination({ kind: 'slack', url: 'http://127.0.0.1:9000/services/x', rules })).resolves.toBeDefined();
    await expect(checkDestination({ kind: 'webhook', url: 'http://relay.internal:81/x', rules, resolve: resolveTo('10.1.1.1') })).resolves.toBeDefined();
    await expect(checkDestination({ kind: 'slack', url: 'http://127.0.0.1:9001/services/x', rules })).rejects.toThrow('must be at hooks.slack.com');
    await expect(checkDestination({ kind: 'webhook', url: 'https://127.0.0.1:9001/x', rules })).rejects.toThrow('is not a public address');
  });

  it('refuses what is not an http(s) URL, or carries credentials', async () => {
    await expect(checkDestination({ kind: 'webhook', url: 'file:///etc/passwd', rules: strict })).rejects.toThrow('must be an https URL');
    await expect(checkDestination({ kind: 'webhook', url: 'not a url', rules: strict })).rejects.toThrow('is not a valid URL');
    await expect(checkDestination({ kind: 'webhook', url: 'https://u:p@example.com/', rules: strict })).rejects.toThrow('must not carry a user name or password');
  });
});
