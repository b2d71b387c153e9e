"""Merge engines: how the records of one primary key become one row (Java's
``org.apache.paimon.mergetree.compact.*MergeFunction``).

* ``base``: the seam (``MergeFunction``, ``Groups``, ``merge_key_values``, row kinds).
* ``factory``: ``key_value_merge(schema)``, the entry point for reads, writes and compaction.
* ``deduplicate``, ``first_row``, ``partial_update``, ``aggregate``: one module per engine.
* ``aggregators``: the field aggregate functions (aggregation, partial-update groups).
"""
