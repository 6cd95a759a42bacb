-- The cash part of each day-start snapshot, for the portfolio history's points (DESIGN §6); null
-- where it was not known when the snapshot was taken.
ALTER TABLE "equity_snapshots" ADD COLUMN "cash" numeric;