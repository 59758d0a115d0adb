-- Access rules are also known by a number: Run:ai's API names an access rule by an integer
-- (its /api/v1/authorization/access-rules routes), where Arbiter's own routes name it by its
-- uuid. The number is given once and never changes or is reused; the rules there already are
-- numbered in the order they were made, then each new rule takes the next one.
ALTER TABLE access_rules ADD COLUMN number integer;
UPDATE access_rules r SET number = n.number
FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS number FROM access_rules) n
WHERE r.id = n.id;
ALTER TABLE access_rules ALTER COLUMN number SET NOT NULL,
    ALTER COLUMN number ADD GENERATED ALWAYS AS IDENTITY;
SELECT setval(pg_get_serial_sequence('access_rules', 'number'), coalesce(max(number), 0) + 1, false) FROM access_rules;
ALTER TABLE access_rules ADD CONSTRAINT access_rules_number_unique UNIQUE (number);
