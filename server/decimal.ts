// The exact decimal of every sum of money, quantity and price: decimal.js at 40 significant digits,
// whatever precision the rest of the process sets on the global constructor.
import { Decimal } from 'decimal.js';

/**
 * 40 significant digits keep a product of a crypto quantity (8 places) and a price exact, where
 * decimal.js's default of 20 would round it. Its results are ordinary Decimal instances
 * (`instanceof Decimal` holds) that keep this precision in further arithmetic.
 */
export const ExactDecimal = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_EVEN });
