"""Metadata statements answered in the Python process, without Spark.

`paimon-sql` routes each statement here first (`engine.MetadataEngine`); what this package
cannot answer exactly as the Spark path would is handed to Spark. Nothing here imports pyspark.
"""
