// TRUST_PROXY: the setting's forms (off, a hop count, a CIDR list) and its refusals, and the
// client address chosen from the socket peer and X-Forwarded-For under each form.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config.ts';
import { addressOfEntry, chooseClientAddress, parseTrustProxy, type TrustProxy } from '../../server/http/proxy.ts';

const trust = (value: string): TrustProxy => {
  const parsed = parseTrustProxy(value);
  if (typeof parsed === 'string') throw new Error(`TRUST_PROXY=${value} refused: ${parsed}`);
  return parsed;
};

describe('parsing TRUST_PROXY', () => {
  it.each([undefined, '', '  ', 'false', 'FALSE', '0'])('%j is off', (value) => {
    expect(parseTrustProxy(value)).toEqual({ mode: 'off' });
  });

  it.each([
    ['true', 1],
    ['TRUE', 1],
    ['1', 1],
    ['2', 2],
    [' 3 ', 3],
    ['32', 32],
  ])('%j is a count of %i trusted hops', (value, hops) => {
    expect(parseTrustProxy(value)).toEqual({ mode: 'hops', hops });
  });

  it('reads a list of addresses and CIDR ranges, IPv4 and IPv6', () => {
    const parsed = trust('10.0.0.0/8, ::1/128,127.0.0.1,, 2001:db8::/32');
    expect(parsed).toMatchObject({ mode: 'cidrs', ranges: ['10.0.0.0/8', '::1/128', '127.0.0.1', '2001:db8::/32'] });
    if (parsed.mode !== 'cidrs') throw new Error('not a CIDR list');
    expect(parsed.trusted.check('10.200.0.1', 'ipv4')).toBe(true);
    expect(parsed.trusted.check('11.0.0.1', 'ipv4')).toBe(false);
    expect(parsed.trusted.check('2001:db8:1::9', 'ipv6')).toBe(true);
  });

  it.each([
    ['yes', /hop count .* or a comma list/],
    ['33', /1 to 32/],
    ['99999999999999999999', /1 to 32/],
    ['01', /"01" is none/],
    ['-1', /"-1" is none/],
    ['1.5', /"1.5" is none/],
    ['10.0.0.0/33', /"10.0.0.0\/33" is none/],
    ['::1/129', /"::1\/129" is none/],
    ['10.0.0.0/x', /is none/],
    ['10.0.0.0/', /is none/],
    ['10.0.0.0/8, proxy.internal', /"proxy.internal" is none/],
    ['256.0.0.1', /is none/],
    [',', /at least one/],
  ])('refuses %j', (value, reason) => {
    const parsed = parseTrustProxy(value);
    expect(typeof parsed).toBe('string');
    expect(parsed).toMatch(reason);
  });

  describe('through loadConfig', () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ts-proxy-'));
    afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
    // Both secrets set: nothing is generated or written.
    const env = (value: string) => ({ DATA_DIR: dataDir, AUTH_SECRET_KEY: 'k'.repeat(40), ENCRYPTION_SALT: 's'.repeat(32), TRUST_PROXY: value });

    it('yields the parsed setting', () => {
      expect(loadConfig(env('2')).TRUST_PROXY).toEqual({ mode: 'hops', hops: 2 });
      expect(loadConfig(env('')).TRUST_PROXY).toEqual({ mode: 'off' });
      expect(loadConfig(env('127.0.0.1/32')).TRUST_PROXY).toMatchObject({ mode: 'cidrs', ranges: ['127.0.0.1/32'] });
    });

    it.each(['yes', '10.0.0.0/40', '0x1'])('fails with a ConfigError naming TRUST_PROXY for %j', (value) => {
      let error: unknown;
      try {
        loadConfig(env(value));
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).setting).toBe('TRUST_PROXY');
      expect((error as ConfigError).message).toMatch(/^TRUST_PROXY: /);
    });
  });
});

describe('an X-Forwarded-For entry', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['2001:db8::5', '2001:db8::5'],
    ['203.0.113.9:4711', '203.0.113.9'],
    ['[2001:db8::5]', '2001:db8::5'],
    ['[2001:db8::5]:4711', '2001:db8::5'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['::FFFF:203.0.113.9', '203.0.113.9'],
    ['fe80::1%eth0', 'fe80::1%eth0'],
  ])('%j is the address %j', (entry, address) => {
    expect(addressOfEntry(entry)).toBe(address);
  });

  it.each(['', 'unknown', '_hidden', '203.0.113', '203.0.113.9.1', '01.2.3.4', '203.0.113.9:', '203.0.113.9:x', '[203.0.113.9]', '[2001:db8::5', '[2001:db8::5]x', '2001:db8::5:80:1:2:3:4', '1'.repeat(100)])(
    '%j is malformed',
    (entry) => {
      expect(addressOfEntry(entry)).toBeUndefined();
    },
  );
});

describe('choosing the client address', () => {
  const PROXY = '10.0.0.1';
  const CLIENT = '198.51.100.7';
  const SPOOF = '203.0.113.66';

  it('off: the socket peer, whatever X-Forwarded-For says; a dual-stack IPv4 peer reads as IPv4', () => {
    expect(chooseClientAddress(PROXY, `${SPOOF}, ${CLIENT}`, trust('false'))).toBe(PROXY);
    expect(chooseClientAddress(`::ffff:${CLIENT}`, undefined, trust('false'))).toBe(CLIENT);
    expect(chooseClientAddress('::1', undefined, trust('false'))).toBe('::1');
    expect(chooseClientAddress(undefined, CLIENT, trust('1'))).toBe('unknown');
  });

  describe('a hop count', () => {
    it('1: the entry our proxy appended, not the leftmost one the client wrote', () => {
      expect(chooseClientAddress(PROXY, `${SPOOF}, ${CLIENT}`, trust('1'))).toBe(CLIENT);
      expect(chooseClientAddress(PROXY, CLIENT, trust('true'))).toBe(CLIENT);
    });

    it('N: the entry N positions from the right of [...entries, socket]', () => {
      const header = `${SPOOF}, ${CLIENT}, 10.0.0.3, 10.0.0.2`;
      expect(chooseClientAddress(PROXY, header, trust('1'))).toBe('10.0.0.2');
      expect(chooseClientAddress(PROXY, header, trust('2'))).toBe('10.0.0.3');
      expect(chooseClientAddress(PROXY, header, trust('3'))).toBe(CLIENT);
    });

    it('a chain shorter than the count yields its leftmost address; none at all the socket', () => {
      expect(chooseClientAddress(PROXY, `${CLIENT}, 10.0.0.2`, trust('5'))).toBe(CLIENT);
      expect(chooseClientAddress(PROXY, undefined, trust('2'))).toBe(PROXY);
      expect(chooseClientAddress(PROXY, '', trust('2'))).toBe(PROXY);
    });

    it('several X-Forwarded-For headers read as one list, in order', () => {
      expect(chooseClientAddress(PROXY, [`${SPOOF}, ${CLIENT}`, '10.0.0.2'], trust('2'))).toBe(CLIENT);
    });

    it('a malformed entry stops the walk at the last good address, without throwing', () => {
      expect(chooseClientAddress(PROXY, `${SPOOF}, not-an-ip, 10.0.0.2`, trust('3'))).toBe('10.0.0.2');
      expect(chooseClientAddress(PROXY, `${SPOOF}, garbage`, trust('1'))).toBe(PROXY);
      expect(chooseClientAddress(PROXY, `${SPOOF},, ${CLIENT}`, trust('3'))).toBe(CLIENT);
      expect(chooseClientAddress(PROXY, ` , ${CLIENT}`, trust('3'))).toBe(CLIENT);
      expect(chooseClientAddress(PROXY, '\u0000\u00ff, ', trust('1'))).toBe(PROXY);
    });

    it('a huge forged prefix is never read past the trusted hops', () => {
      expect(chooseClientAddress(PROXY, `${'x'.repeat(100_000)}, ${CLIENT}`, trust('1'))).toBe(CLIENT);
    });
  });

  describe('a CIDR list', () => {
    const ranges = trust('10.0.0.0/8,::1/128,127.0.0.1');

    it('skips trusted proxies from the socket leftwards; the first untrusted address is the client', () => {
      expect(chooseClientAddress(PROXY, `${SPOOF}, ${CLIENT}, 10.9.9.9`, ranges)).toBe(CLIENT);
      expect(chooseClientAddress('::1', `${SPOOF}, 2001:db8::5`, ranges)).toBe('2001:db8::5');
    });

    it('an untrusted socket peer is the client, whatever it forwards', () => {
      expect(chooseClientAddress(CLIENT, `${SPOOF}, 10.0.0.2`, ranges)).toBe(CLIENT);
    });

    it('matches IPv4-mapped IPv6 peers and entries against IPv4 ranges', () => {
      expect(chooseClientAddress('::ffff:127.0.0.1', `${SPOOF}, ::ffff:10.1.2.3`, ranges)).toBe(SPOOF);
      expect(chooseClientAddress('::ffff:127.0.0.1', CLIENT, ranges)).toBe(CLIENT);
    });

    it('reads entries with ports', () => {
      expect(chooseClientAddress(PROXY, `[2001:db8::5]:4711, 10.0.0.2:80`, ranges)).toBe('2001:db8::5');
    });

    it('a chain of trusted addresses only yields the leftmost', () => {
      expect(chooseClientAddress(PROXY, '10.0.0.3, 10.0.0.2', ranges)).toBe('10.0.0.3');
    });

    it('a malformed entry stops the walk at the proxy that passed it on', () => {
      expect(chooseClientAddress(PROXY, `${SPOOF}, bogus, 10.0.0.2`, ranges)).toBe('10.0.0.2');
    });
  });
});
