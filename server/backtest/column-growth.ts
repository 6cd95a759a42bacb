// The column logs of a run (its fills, its round trips) keep typed arrays that grow when full.

type TColumn = Int32Array | Uint8Array | Float64Array;

/** A copy of `column`, of the same kind, with room for `length` values. */
export const withRoom = <TArray extends TColumn>(column: TArray, length: number): TArray => {
  // The column's own constructor, so an Int32Array stays one.
  const out = new (column.constructor as new (length: number) => TArray)(length);
  out.set(column);
  return out;
};
