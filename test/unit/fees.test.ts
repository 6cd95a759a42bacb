// Fee profiles: the three names, their rates, lookup by name and the default per asset class.
import { describe, expect, it } from 'vitest';
import { ZAssetClass } from '../../contracts/common.ts';
import { FEE_PROFILE_NAMES, defaultProfileFor, profileByName } from '../../server/brokers/fees.ts';

describe('fee profiles', () => {
  it('lists the three profile names and finds each by its name', () => {
    expect([...FEE_PROFILE_NAMES]).toEqual(['us_broker_zero', 'kr_broker_default', 'crypto_default']);
    for (const name of FEE_PROFILE_NAMES) expect(profileByName(name)?.name).toBe(name);
  });

  it('answers undefined for a name it does not know, including names on Object.prototype', () => {
    expect(profileByName('zero')).toBeUndefined();
    expect(profileByName('US_BROKER_ZERO')).toBeUndefined();
    expect(profileByName('toString')).toBeUndefined();
    expect(profileByName('__proto__')).toBeUndefined();
  });

  it('gives each asset class a default profile of that asset class', () => {
    expect(defaultProfileFor('us_equity').name).toBe('us_broker_zero');
    expect(defaultProfileFor('kr_equity').name).toBe('kr_broker_default');
    expect(defaultProfileFor('crypto').name).toBe('crypto_default');
    for (const assetClass of ZAssetClass.options) expect(defaultProfileFor(assetClass).assetClass).toBe(assetClass);
  });

  it('charges nothing on US equities: no commission, no tax, no slippage (the frictionless reference)', () => {
    const us = defaultProfileFor('us_equity');
    expect(us.commissionRate.toFixed()).toBe('0');
    expect(us.sellTaxRate.toFixed()).toBe('0');
    expect(us.slippageRate.toFixed()).toBe('0');
  });

  it('charges KRX commission on both sides and the 2026 transaction tax of 0.20 % on sells, in whole won', () => {
    const kr = defaultProfileFor('kr_equity');
    expect(kr.commissionRate.toFixed()).toBe('0.00015');
    expect(kr.sellTaxRate.toFixed()).toBe('0.002');
    expect(kr.feeDecimalPlaces).toBe(0);
  });

  it('charges a 0.1 % crypto taker fee each side and no tax', () => {
    const crypto = defaultProfileFor('crypto');
    expect(crypto.commissionRate.toFixed()).toBe('0.001');
    expect(crypto.sellTaxRate.toFixed()).toBe('0');
    expect(crypto.slippageRate.toFixed()).toBe('0.0005');
  });

  it('keeps the profiles frozen, so one caller cannot change another caller’s fills', () => {
    const crypto = defaultProfileFor('crypto');
    expect(Object.isFrozen(crypto)).toBe(true);
  });
});
