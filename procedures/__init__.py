"""``CALL sys.*`` procedures: arguments, defaults and result rows as in Paimon Spark.

Importing the package registers every procedure in ``procedures.base.PROCEDURES``.
"""

from procedures.base import PROCEDURES, ProcedureError, ProcedureResult, call_procedure, register
from procedures.branches import BRANCH_PROCEDURES
from procedures.check import CHECK_PROCEDURES
from procedures.compact import COMPACT_PROCEDURES
from procedures.consumers import CONSUMER_PROCEDURES
from procedures.files import FILE_PROCEDURES
from procedures.maintenance import MAINTENANCE_PROCEDURES
from procedures.partitions import PARTITION_PROCEDURES
from procedures.rescale import RESCALE_PROCEDURES
from procedures.rollback import ROLLBACK_PROCEDURES
from procedures.tags import TAG_PROCEDURES

register(
    *TAG_PROCEDURES,
    *ROLLBACK_PROCEDURES,
    *MAINTENANCE_PROCEDURES,
    *COMPACT_PROCEDURES,
    *CHECK_PROCEDURES,
    *CONSUMER_PROCEDURES,
    *PARTITION_PROCEDURES,
    *FILE_PROCEDURES,
    *RESCALE_PROCEDURES,
    *BRANCH_PROCEDURES,
)

__all__ = ["PROCEDURES", "ProcedureError", "ProcedureResult", "call_procedure"]
