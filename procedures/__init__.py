"""``CALL sys.*`` procedures: arguments, defaults and result rows as in Paimon Spark."""
