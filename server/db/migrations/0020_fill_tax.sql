-- Each fill's tax (the part of its fee that is a transaction tax, a KRX sell's), for the
-- performance route's taxes (DESIGN §6); 0 for fills recorded before it was kept.
ALTER TABLE "order_fills" ADD COLUMN "tax" numeric DEFAULT '0' NOT NULL;