// The address a per-address limit counts under: IPv4 as it is, IPv6 by its /64.
import { describe, expect, it } from 'vitest';
import { addressBucket } from '../../server/auth/throttle.ts';

describe('addressBucket', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    ['', ''],
    ['not an address', 'not an address'],
  ])('%s counts as %s', (address, bucket) => {
    expect(addressBucket(address)).toBe(bucket);
  });
});
