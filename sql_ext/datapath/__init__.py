"""The data path: Paimon tables read and written by Spark executors, never the driver.

One seam each way: ``read`` turns a planned scan into read tasks (the driver plans, the
executors read), ``write`` turns a DataFrame into write tasks whose commit messages the
driver commits once. ``source`` exposes both as Spark's ``paimon`` data source for the
DataFrame API (``spark.read.format("paimon")``, ``df.write.format("paimon")``).
"""
