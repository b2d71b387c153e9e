"""Spark SQL extension: a sqlglot preprocessor, a session wrapper, a shell and a script runner."""
