-- Dropping the column drops its identity sequence and its unique constraint with it.
ALTER TABLE access_rules DROP COLUMN IF EXISTS number;
