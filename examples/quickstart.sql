-- Paimon table lifecycle from Spark SQL: snapshots, tags, time travel and snapshot expiry.
-- Run it with `paimon-sql -f examples/quickstart.sql` (warehouse: spark-conf/spark-defaults.conf,
-- or --warehouse PATH). It starts from a fresh table, so it can be run again and again.

CREATE DATABASE IF NOT EXISTS quickstart;
DROP TABLE IF EXISTS quickstart.orders;

-- A primary-key table, partitioned by day: rows with the same (dt, order_id) are merged.
-- Paimon keeps at least 'snapshot.num-retained.min' snapshots (default 10); 1 lets the
-- expire_snapshots call below keep only two.
CREATE TABLE quickstart.orders (
    order_id BIGINT,
    customer STRING,
    amount DECIMAL(10, 2),
    dt STRING
) PARTITIONED BY (dt)
TBLPROPERTIES (
    'primary-key' = 'dt,order_id',
    'bucket' = '2',
    'snapshot.num-retained.min' = '1'
);

-- Every INSERT commits one snapshot.
INSERT INTO quickstart.orders VALUES
    (1, 'alice', 10.50, '2024-05-01'),
    (2, 'bob', 7.25, '2024-05-01');
INSERT INTO quickstart.orders VALUES
    (3, 'carol', 3.00, '2024-05-02'),
    (1, 'alice', 12.00, '2024-05-01');

-- Pin snapshot 1 under a name: a tag keeps its files alive after the snapshot expires.
CALL sys.create_tag(table => 'quickstart.orders', tag => 'first', snapshot => 1);

INSERT INTO quickstart.orders VALUES (4, 'dave', 99.90, '2024-05-02');
INSERT INTO quickstart.orders VALUES (2, 'bob', 8.00, '2024-05-01');

-- System tables: a `$` suffix on the table name (back-quotes are optional).
SELECT snapshot_id, commit_kind, total_record_count, delta_record_count
FROM quickstart.orders$snapshots ORDER BY snapshot_id;
SELECT tag_name, snapshot_id, record_count FROM quickstart.`orders$tags`;

-- Time travel: to a tag, or to a snapshot id.
SELECT * FROM quickstart.orders VERSION AS OF 'first' ORDER BY order_id;
SELECT * FROM quickstart.orders VERSION AS OF 1 ORDER BY order_id;
SELECT * FROM quickstart.orders ORDER BY order_id;

-- Keep only the two latest snapshots; the tag still holds snapshot 1.
CALL sys.expire_snapshots(table => 'quickstart.orders', retain_max => 2);

SELECT snapshot_id, commit_kind, total_record_count FROM quickstart.orders$snapshots
ORDER BY snapshot_id;
SELECT * FROM quickstart.orders VERSION AS OF 'first' ORDER BY order_id;
