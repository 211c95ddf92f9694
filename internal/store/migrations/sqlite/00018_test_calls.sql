-- +goose Up
-- Calls placed from the console's browser (direction 'test', issue 21) are
-- kept like any other call. SQLite cannot alter a CHECK constraint, so the
-- table's stored definition is edited in place, the procedure SQLite's
-- ALTER TABLE documentation gives for loosening a constraint: every row
-- already satisfies the wider check, and the file format does not change.
-- A rebuild of the table would instead have to name every column, and
-- lose any a later migration adds. RESET reloads the definition on this
-- connection; the CREATE and DROP after it bump the schema cookie, so the
-- other connections reload it too.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
   SET sql = replace(sql, 'CHECK (direction IN (''inbound'', ''outbound''))', 'CHECK (direction IN (''inbound'', ''outbound'', ''test''))')
 WHERE type = 'table' AND name = 'calls';
PRAGMA writable_schema = RESET;
CREATE TABLE schema_cookie_bump (x INTEGER);
DROP TABLE schema_cookie_bump;
-- Fail loudly, not silently, should the definition not have held the
-- check as 00003 wrote it.
CREATE TEMP TABLE test_direction_allowed (ok INTEGER CHECK (ok = 1));
INSERT INTO test_direction_allowed
SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'calls' AND sql LIKE '%''outbound'', ''test''%';
DROP TABLE test_direction_allowed;

-- +goose Down
DELETE FROM calls WHERE direction = 'test';
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
   SET sql = replace(sql, 'CHECK (direction IN (''inbound'', ''outbound'', ''test''))', 'CHECK (direction IN (''inbound'', ''outbound''))')
 WHERE type = 'table' AND name = 'calls';
PRAGMA writable_schema = RESET;
CREATE TABLE schema_cookie_bump (x INTEGER);
DROP TABLE schema_cookie_bump;
