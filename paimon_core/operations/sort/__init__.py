"""Sort compaction of append tables (Java's ``org.apache.paimon.sort`` and Paimon Spark's
``org.apache.paimon.spark.sort``): the space-filling-curve indexes rows are ordered by.

* ``arrow_values``: an Arrow column as the values Java's ``InternalRow`` getters return.
* ``zorder``: ``ZOrderByteUtils`` and ``ZIndexer`` (bit-interleaved ordered bytes).
* ``hilbert``: davidmoten's ``HilbertCurve`` index, ``ConvertBinaryUtil`` and ``HilbertIndexer``.
* ``table_sorter``: ``TableSorter`` (order, zorder, hilbert): an Arrow table in index order.
"""
