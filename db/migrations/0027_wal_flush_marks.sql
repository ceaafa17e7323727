-- Durable-commit marks (db/wal-flush.ts). A table's write group commits without waiting for the
-- WAL to reach disk, so that its lock is let go at once, and answers its writers only after a
-- later transaction that does wait for it has committed: updating one of these rows is that
-- transaction (a transaction that writes no WAL commits without flushing, whatever the setting).
-- 64 rows, one per slot (a connection's backend pid modulo 64): the table never grows, and two
-- marks rarely share a row lock.
create table wal_flush_marks (
  slot smallint primary key check (slot between 0 and 63),
  flushed_at timestamptz not null
);
insert into wal_flush_marks (slot, flushed_at) select s, now() from generate_series(0, 63) as s;
