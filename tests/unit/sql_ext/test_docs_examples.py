"""The Spark SQL examples of Paimon's docs (sql-ddl.md, auxiliary.md, the global system tables
of system-tables.mdx, sql-functions.md's max_pt), run verbatim in order.

Each example either runs, or fails with one line naming the statement where Paimon-Spark with
a filesystem catalog fails too (LOCATION, permanent views, the docs' unquoted `SET` keys, which
Spark's own parser rejects). Placeholders (`<mydb>`, `xxxx`) and examples for other engines,
metastores or format tables are left out. Lines marked `# setup` are not from the docs.
README's Python example runs too, and prints what README shows.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from paimon_core.catalog import FileSystemCatalog
from sql_ext.session import PaimonSession

OK = None
SETUP = "# setup"

EXAMPLES: list[tuple[str, str | None]] = [
    # sql-ddl.md: Catalog, Create Table
    ("USE paimon.default", OK),
    (
        """CREATE TABLE my_table (
    user_id BIGINT,
    item_id BIGINT,
    behavior STRING,
    dt STRING,
    hh STRING
) TBLPROPERTIES (
    'primary-key' = 'dt,hh,user_id'
)""",
        OK,
    ),
    ("DROP TABLE my_table", SETUP),
    (
        """CREATE TABLE my_table (
    user_id BIGINT,
    item_id BIGINT,
    behavior STRING,
    dt STRING,
    hh STRING
) PARTITIONED BY (dt, hh) TBLPROPERTIES (
    'primary-key' = 'dt,hh,user_id'
)""",
        OK,
    ),
    # Create External Table: a Hive-metastore feature; the filesystem catalog refuses it
    (
        """CREATE TABLE my_table_ext (
    user_id BIGINT,
    item_id BIGINT,
    behavior STRING,
    dt STRING,
    hh STRING
) PARTITIONED BY (dt, hh) TBLPROPERTIES (
    'primary-key' = 'dt,hh,user_id'
) LOCATION '/path/to/table'""",
        "does not support specifying the table path",
    ),
    ("CREATE TABLE my_table LOCATION '/path/to/table'", "does not support specifying"),
    ("DROP TABLE my_table", SETUP),
    # Create Table As Select
    ("CREATE TABLE my_table (\n     user_id BIGINT,\n     item_id BIGINT\n)", OK),
    ("CREATE TABLE my_table_as AS SELECT * FROM my_table", OK),
    (
        """CREATE TABLE my_table_partition (
      user_id BIGINT,
      item_id BIGINT,
      behavior STRING,
      dt STRING,
      hh STRING
) PARTITIONED BY (dt, hh)""",
        OK,
    ),
    (
        "CREATE TABLE my_table_partition_as PARTITIONED BY (dt) AS SELECT * FROM "
        "my_table_partition",
        OK,
    ),
    (
        """CREATE TABLE my_table_options (
       user_id BIGINT,
       item_id BIGINT
) TBLPROPERTIES ('file.format' = 'orc')""",
        OK,
    ),
    (
        "CREATE TABLE my_table_options_as TBLPROPERTIES ('file.format' = 'parquet') AS SELECT * "
        "FROM my_table_options",
        OK,
    ),
    (
        """CREATE TABLE my_table_pk (
     user_id BIGINT,
     item_id BIGINT,
     behavior STRING,
     dt STRING,
     hh STRING
) TBLPROPERTIES (
    'primary-key' = 'dt,hh,user_id'
)""",
        OK,
    ),
    (
        "CREATE TABLE my_table_pk_as TBLPROPERTIES ('primary-key' = 'dt') AS SELECT * FROM "
        "my_table_pk",
        OK,
    ),
    (
        """CREATE TABLE my_table_all (
    user_id BIGINT,
    item_id BIGINT,
    behavior STRING,
    dt STRING,
    hh STRING
) PARTITIONED BY (dt, hh) TBLPROPERTIES (
    'primary-key' = 'dt,hh,user_id'
)""",
        OK,
    ),
    (
        "CREATE TABLE my_table_all_as PARTITIONED BY (dt) TBLPROPERTIES ('primary-key' = "
        "'dt,hh') AS SELECT * FROM my_table_all",
        OK,
    ),
    ("DROP TABLE my_table", SETUP),
    # Replace Table
    (
        """CREATE TABLE my_table (
    user_id BIGINT,
    item_id BIGINT,
    behavior STRING
) TBLPROPERTIES (
    'primary-key' = 'user_id',
    'bucket' = '2'
)""",
        OK,
    ),
    ("INSERT INTO my_table VALUES (1, 10, 'pv')", OK),
    (
        """REPLACE TABLE my_table (
    user_id BIGINT,
    item_id BIGINT,
    category STRING
) TBLPROPERTIES (
    'primary-key' = 'user_id',
    'bucket' = '4'
)""",
        OK,
    ),
    ("SELECT * FROM my_table", OK),
    ("SELECT * FROM my_table VERSION AS OF 1", OK),
    ("CREATE TABLE source_table (user_id BIGINT, item_id BIGINT, behavior STRING)", SETUP),
    (
        """CREATE OR REPLACE TABLE my_table
TBLPROPERTIES (
    'primary-key' = 'user_id',
    'bucket' = '4'
)
AS SELECT user_id, item_id, behavior FROM source_table""",
        OK,
    ),
    # Create Table Like
    ("CREATE TABLE target_table LIKE source_table", OK),
    (
        """CREATE TABLE source_tbl (
    id INT,
    name STRING,
    pt STRING
) COMMENT 'source comment'
PARTITIONED BY (pt)
TBLPROPERTIES ('primary-key' = 'id,pt', 'bucket' = '5')""",
        OK,
    ),
    ("CREATE TABLE target_tbl LIKE source_tbl", OK),
    # View: the filesystem catalog has no views; temporary views are Spark's
    ("CREATE TABLE t1 (a INT)", SETUP),
    ("CREATE VIEW default.v1 AS SELECT * FROM t1", "does not support views"),
    ("CREATE TEMPORARY VIEW v1 AS SELECT * FROM t1", OK),
    ("CREATE OR REPLACE TEMPORARY VIEW v1 AS SELECT * FROM t1", OK),
    ("DROP VIEW v1", OK),
    ("DROP VIEW default.v1", "has no views"),
    # Tag (T gets two snapshots before these)
    ("ALTER TABLE T CREATE TAG `TAG-1`", OK),
    ("ALTER TABLE T CREATE TAG IF NOT EXISTS `TAG-1`", OK),
    ("ALTER TABLE T CREATE TAG `TAG-2` RETAIN 7 DAYS", OK),
    ("ALTER TABLE T CREATE TAG `TAG-3` AS OF VERSION 1", OK),
    ("ALTER TABLE T CREATE TAG `TAG-4` AS OF VERSION 2 RETAIN 12 HOURS", OK),
    ("ALTER TABLE T REPLACE TAG `TAG-4` AS OF VERSION 2 RETAIN 24 HOURS", OK),
    ("ALTER TABLE T CREATE OR REPLACE TAG `TAG-5` AS OF VERSION 2 RETAIN 24 HOURS", OK),
    ("ALTER TABLE T DELETE TAG `TAG-1`", OK),
    ("ALTER TABLE T DELETE TAG IF EXISTS `TAG-1`", OK),
    ("ALTER TABLE T DELETE TAG `TAG-1,TAG-2`", OK),
    ("ALTER TABLE T CREATE TAG `TAG-1`", SETUP),
    ("ALTER TABLE T RENAME TAG `TAG-1` TO `TAG-2`", OK),
    ("SHOW TAGS T", OK),
    # auxiliary.md: Set / Reset (Spark's parser takes no `-` or `*` in an unquoted key)
    ("SET spark.sql.sources.partitionOverwriteMode=dynamic", OK),
    ("SET spark.paimon.file.block-size=512M", "INVALID_SET_SYNTAX"),
    ("RESET spark.paimon.file.block-size", "INVALID_RESET_COMMAND_FORMAT"),
    ("SET spark.paimon.*.default.T.scan.snapshot-id=1", "INVALID_SET_SYNTAX"),
    ("SET `spark.paimon.*.default.T.scan.snapshot-id`=`1`", SETUP),
    ("SELECT * FROM default.T", OK),
    ("RESET `spark.paimon.*.default.T.scan.snapshot-id`", SETUP),
    ("SET spark.paimon.*.*.T.scan.snapshot-id=1", "INVALID_SET_SYNTAX"),
    ("SET spark.paimon.scan.snapshot-id=1", "INVALID_SET_SYNTAX"),
    # Describe / Show
    ("DESCRIBE TABLE my_table", OK),
    ("DESCRIBE TABLE EXTENDED my_table", OK),
    ("SHOW CREATE TABLE my_table", OK),
    ("SHOW COLUMNS FROM my_table", OK),
    ("DROP TABLE my_table", SETUP),
    ("CREATE TABLE my_table (col1 INT, dt STRING) PARTITIONED BY (dt)", SETUP),
    ("SHOW PARTITIONS my_table", OK),
    ("SHOW PARTITIONS my_table PARTITION (dt='20230817')", OK),
    ("CREATE DATABASE db_name", SETUP),
    ("SHOW TABLE EXTENDED IN db_name LIKE 'test*'", OK),
    (
        "SHOW TABLE EXTENDED IN db_name LIKE 'table_name' PARTITION(pt = '2024')",
        "table_name",
    ),
    ("SHOW VIEWS", OK),
    ("SHOW VIEWS LIKE 'test*'", OK),
    ("ANALYZE TABLE my_table COMPUTE STATISTICS", OK),
    ("ANALYZE TABLE my_table COMPUTE STATISTICS FOR COLUMNS col1", OK),
    ("ANALYZE TABLE my_table COMPUTE STATISTICS FOR ALL COLUMNS", OK),
    ("CREATE TABLE table_identifier (a INT)", SETUP),
    ("REFRESH TABLE table_identifier", OK),
    # system-tables.mdx: Global System Table
    ("USE sys", OK),
    ("SHOW TABLES", OK),
    ("SELECT * FROM sys.tables", OK),
    ("SELECT * FROM sys.partitions", OK),
    ("SELECT * FROM sys.all_table_options", OK),
    ("SELECT * FROM sys.catalog_options", OK),
    ("USE default", SETUP),
    # sql-functions.md: max_pt
    ("CREATE TABLE t (a STRING, pt STRING) PARTITIONED BY (pt)", SETUP),
    ("INSERT INTO t VALUES ('a', '20250101'), ('b', '20241231')", SETUP),
    ("SELECT sys.max_pt('t')", OK),
    ("SELECT * FROM t where pt = sys.max_pt('t')", OK),
]


def test_docs_examples_run_verbatim(spark: SparkSession, warehouse: str) -> None:
    conf = {"spark.sql.catalog.paimon.catalog-options-table.enabled": "true"}
    session = PaimonSession(spark, warehouse=warehouse, conf=conf)
    results: dict[str, list[tuple[object, ...]]] = {}
    try:
        session.sql("CREATE TABLE T (id INT, v STRING)")  # setup: two snapshots for the tags
        table = FileSystemCatalog(warehouse).get_table("default.T")
        arrow = pa.schema([("id", pa.int32()), ("v", pa.string())])
        for i in range(2):
            table.write_arrow(pa.table({"id": [i], "v": [str(i)]}, arrow))
        for statement, expected in EXAMPLES:
            if expected is None or expected == SETUP:
                results[statement] = [tuple(r) for r in session.sql(statement).collect()]
                continue
            with pytest.raises(Exception, match=expected) as caught:
                session.sql(statement)
            assert "\n" not in str(caught.value).strip(), statement
    finally:
        for key in (
            "spark.sql.sources.partitionOverwriteMode",
            "spark.paimon.*.default.T.scan.snapshot-id",
        ):
            spark.conf.unset(key)
        session.stop()  # drops the reads its temporary views pinned; Spark keeps running
    assert results["SELECT * FROM my_table VERSION AS OF 1"] == [(1, 10, "pv")]
    assert results["SELECT * FROM my_table"] == []
    assert results["SHOW TAGS T"] == [("TAG-2",), ("TAG-3",), ("TAG-4",), ("TAG-5",)]
    assert results["SELECT * FROM default.T"] == [(0, "0")]  # the dynamic option, quoted
    assert results["SHOW TABLES"][0] == ("sys", "tables", False)
    assert results["SELECT sys.max_pt('t')"] == [("20250101",)]
    assert results["SELECT * FROM t where pt = sys.max_pt('t')"] == [("a", "20250101")]
    assert results["SHOW VIEWS"] == []


README = Path(__file__).resolve().parents[3] / "README.md"


def test_readme_python_example_prints_what_readme_shows(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """README's notebook example, run as written (`getOrCreate` gives the shared session),
    prints the output README shows; `spark.sql` alone does not see the table."""
    section = README.read_text(encoding="utf-8").split("### From Python or a notebook", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    shown = re.search(r"```text\n(.*?)```", section, re.S)
    assert code is not None and shown is not None
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    try:
        exec(compile(code.group(1), "README.md", "exec"), namespace)
        assert capsys.readouterr().out == shown.group(1)
        with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
            spark.sql("SELECT * FROM shop.orders").collect()
    finally:
        if "paimon" in namespace:
            namespace["paimon"].stop()
