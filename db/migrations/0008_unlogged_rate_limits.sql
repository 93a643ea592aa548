-- Hand-written (drizzle's schema cannot say UNLOGGED): the rate-limit counters are rewritten on
-- every authenticated request and need no crash safety, so their table skips the WAL.
ALTER TABLE "rate_limits" SET UNLOGGED;
