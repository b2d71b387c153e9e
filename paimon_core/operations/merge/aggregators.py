"""Field aggregators: how one column of the records of a key folds into one value (Java's
``org.apache.paimon.mergetree.compact.aggregate.Field*Agg``: Paimon 0.9 semantics for the
functions 0.9 has, the latest Paimon's for ``merge_map_with_keytime`` and
``nested_partial_update``, which 0.9 lacks, and for ``nested_update``'s newer options).

Each aggregator has Java's scalar methods on Python values (``reset``, ``agg``,
``agg_reversed``, ``retract``), which partial-update's per-record path uses, and a bulk
``reduce`` folding a whole column of a batch of keys at once (``AggregateMergeFunction``). The
default ``reduce`` loops over the scalar methods; the common functions override it with
numpy/Arrow operations that give the same values (tests compare the two):

* ``sum``/``product`` of TINYINT..BIGINT fail the merge when a step overflows the column's
  type (the latest Paimon's ``addExact``/``multiplyExact``; Paimon 0.9 wrapped around); of
  FLOAT/DOUBLE they fold in record order (floating-point addition is not associative), in
  float32 for FLOAT; DECIMAL goes through Python's ``Decimal`` as Java's ``DecimalUtils``
  (a product or a DECIMAL(p > 18) sum that no longer fits its precision becomes null).
* ``max``/``min`` compare as ``InternalRowUtils.compare`` (FLOAT/DOUBLE as ``Double.compare``).
* ``listagg`` joins non-blank strings with ``fields.<f>.list-agg-delimiter`` (Paimon 2.0 skips
  empty and whitespace-only strings as nulls; earlier releases joined them).
* ``theta_sketch``/``hll_sketch`` union Apache DataSketches sketches, ``rbm32``/``rbm64``
  roaring bitmaps, with Java's bytes (``format/sketches.py``, ``format/roaring_bitmap64.py``).

Retraction (``-U``/``-D`` records) follows Java's ``retract``: ``sum`` subtracts, ``product``
divides, ``last_value`` and ``last_non_null_value`` clear, ``collect``/``merge_map``/
``nested_update`` remove elements, ``primary-key`` keeps the input; the other functions cannot
retract and fail the merge unless ``fields.<f>.ignore-retract`` is set (then retractions are
skipped).

Element order of ``collect`` with ``distinct``, ``merge_map``, ``merge_map_with_keytime`` and
``nested_update``/``nested_partial_update`` with a ``nested-key`` is first-occurrence order,
where Java iterates a ``HashSet``/``HashMap``: the same elements, possibly in another order.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import MergeError, SchemaError, UnsupportedFeature
from paimon_core.format import sketches
from paimon_core.format.float_order import is_floating, order_key, ordered
from paimon_core.format.merge_options import FieldAggregation, check_aggregate_type
from paimon_core.format.roaring import RoaringFormatError
from paimon_core.format.roaring_bitmap64 import RoaringBitmap64
from paimon_core.operations.merge.base import Groups, take_or_null, valid_of

if TYPE_CHECKING:
    from paimon_core.format.types import DataType

_INT_BITS = {pa.int8(): 8, pa.int16(): 16, pa.int32(): 32, pa.int64(): 64}
_NUMPY_INT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_WIDE = decimal.Context(prec=120)


_JAVA_INT = {8: "byte", 16: "short", 32: "int", 64: "long"}


def _java_div(a: int, b: int) -> int:
    """Java's integer division (truncating); ``b`` is not 0."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _from_big_decimal(value: decimal.Decimal, precision: int, scale: int) -> decimal.Decimal | None:
    """Paimon's ``Decimal.fromBigDecimal``: HALF_UP to ``scale``, null beyond ``precision``."""
    rounded = value.quantize(decimal.Decimal(1).scaleb(-scale), decimal.ROUND_HALF_UP, _WIDE)
    digits = len(str(abs(rounded.scaleb(scale, _WIDE).to_integral_value())))
    return None if digits > precision else rounded


class FieldAggregator:
    """One column's aggregate function (see the module docstring)."""

    name: ClassVar[str] = ""
    supports_retract: ClassVar[bool] = False

    def __init__(self, field: str, data_type: DataType, arrow_type: pa.DataType) -> None:
        self.field = field
        self.data_type = data_type
        self.arrow_type = arrow_type

    # ------------------------------------------------------------ Java's scalar methods

    def reset(self) -> None:
        """Forget per-key state (``first_value``'s "seen" flag) before the next key."""

    def agg(self, acc: Any, value: Any) -> Any:
        raise NotImplementedError

    def agg_reversed(self, acc: Any, value: Any) -> Any:
        """``agg`` of an input older than the accumulator (partial-update sequence groups)."""
        return self.agg(value, acc)

    def retract(self, acc: Any, value: Any) -> Any:
        raise MergeError(self.retract_error())

    def retract_error(self) -> str:
        return (
            f"Aggregate function '{self.name}' does not support retraction, If you allow this "
            "function to ignore retraction messages, you can configure "
            f"'fields.{self.field}.ignore-retract'='true'."
        )

    # ------------------------------------------------------------------------- bulk

    def reduce(
        self, values: pa.Array, present: np.ndarray, retract: np.ndarray, groups: Groups
    ) -> pa.Array:
        """One value per group: the fold of its ``present`` rows in order, ``retract`` rows
        retracting (the default loops over ``agg``/``retract``)."""
        self.check_retract(present, retract)
        py = values.to_pylist()
        out = []
        for start, end in zip(groups.starts.tolist(), groups.ends.tolist()):
            self.reset()
            acc = None
            for i in range(start, end):
                if present[i]:
                    acc = self.retract(acc, py[i]) if retract[i] else self.agg(acc, py[i])
            out.append(acc)
        return pa.array(out, type=self.arrow_type)

    def check_retract(self, present: np.ndarray, retract: np.ndarray) -> None:
        if not self.supports_retract and (present & retract).any():
            raise MergeError(self.retract_error())


class IgnoreRetractAgg(FieldAggregator):
    """``fields.<f>.ignore-retract = true``: retractions leave the value as it is."""

    supports_retract = True

    def __init__(self, inner: FieldAggregator) -> None:
        super().__init__(inner.field, inner.data_type, inner.arrow_type)
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]

    def reset(self) -> None:
        self.inner.reset()

    def agg(self, acc: Any, value: Any) -> Any:
        return self.inner.agg(acc, value)

    def agg_reversed(self, acc: Any, value: Any) -> Any:
        return self.inner.agg_reversed(acc, value)

    def retract(self, acc: Any, value: Any) -> Any:
        return acc

    def reduce(
        self, values: pa.Array, present: np.ndarray, retract: np.ndarray, groups: Groups
    ) -> pa.Array:
        return self.inner.reduce(values, present & ~retract, np.zeros_like(retract), groups)


# --------------------------------------------------------------------- value pickers


class _Picker(FieldAggregator):
    """Aggregates whose result is one of the inputs: ``reduce`` picks its row."""

    def pick(
        self, valid: np.ndarray, present: np.ndarray, retract: np.ndarray, groups: Groups
    ) -> np.ndarray:
        raise NotImplementedError

    def reduce(
        self, values: pa.Array, present: np.ndarray, retract: np.ndarray, groups: Groups
    ) -> pa.Array:
        self.check_retract(present, retract)
        return take_or_null(values, self.pick(valid_of(values), present, retract, groups))


class PrimaryKeyAgg(_Picker):
    """Primary-key columns: the input (all records of a key share it)."""

    name = "primary-key"
    supports_retract = True

    def agg(self, acc: Any, value: Any) -> Any:
        return value

    def retract(self, acc: Any, value: Any) -> Any:
        return value

    def pick(self, valid, present, retract, groups):  # type: ignore[no-untyped-def]
        return groups.last_where(present)


class LastValueAgg(_Picker):
    name = "last_value"
    supports_retract = True

    def agg(self, acc: Any, value: Any) -> Any:
        return value

    def retract(self, acc: Any, value: Any) -> Any:
        return None

    def pick(self, valid, present, retract, groups):  # type: ignore[no-untyped-def]
        last = groups.last_where(present)
        return np.where((last >= 0) & retract[np.maximum(last, 0)], -1, last)


class LastNonNullValueAgg(_Picker):
    name = "last_non_null_value"
    supports_retract = True

    def agg(self, acc: Any, value: Any) -> Any:
        return acc if value is None else value

    def retract(self, acc: Any, value: Any) -> Any:
        return None if value is not None else acc

    def pick(self, valid, present, retract, groups):  # type: ignore[no-untyped-def]
        last = groups.last_where(present & valid)
        return np.where((last >= 0) & retract[np.maximum(last, 0)], -1, last)


class FirstValueAgg(_Picker):
    name = "first_value"

    def __init__(self, field: str, data_type: DataType, arrow_type: pa.DataType) -> None:
        super().__init__(field, data_type, arrow_type)
        self.initialized = False

    def reset(self) -> None:
        self.initialized = False

    def agg(self, acc: Any, value: Any) -> Any:
        if not self.initialized:
            self.initialized = True
            return value
        return acc

    def pick(self, valid, present, retract, groups):  # type: ignore[no-untyped-def]
        return groups.first_where(present)


class FirstNonNullValueAgg(FirstValueAgg):
    name = "first_non_null_value"

    def agg(self, acc: Any, value: Any) -> Any:
        if not self.initialized and value is not None:
            self.initialized = True
            return value
        return acc

    def pick(self, valid, present, retract, groups):  # type: ignore[no-untyped-def]
        return groups.first_where(present & valid)


class _Extreme(_Picker):
    """``max``/``min``: compared as Java's ``InternalRowUtils.compare``."""

    take_largest: ClassVar[bool] = True

    def _key(self, value: Any) -> Any:
        return order_key(value) if is_floating(self.arrow_type) else value

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        less = self._key(acc) < self._key(value)
        return (value if less else acc) if self.take_largest else (acc if less else value)

    def pick(self, valid, present, retract, groups):  # type: ignore[no-untyped-def]
        raise AssertionError("reduce is overridden")

    def reduce(
        self, values: pa.Array, present: np.ndarray, retract: np.ndarray, groups: Groups
    ) -> pa.Array:
        self.check_retract(present, retract)
        selected = np.flatnonzero(present & valid_of(values))
        index = np.full(len(groups), -1, np.int64)
        if len(selected):
            key = values.take(pa.array(selected))
            if is_floating(key.type):
                key = ordered(key)
            gid = groups.ids[selected]
            table = pa.table({"g": gid, "k": key})
            order = pc.sort_indices(table, [("g", "ascending"), ("k", "ascending")])
            order = np.asarray(order.to_numpy(), dtype=np.int64)
            sorted_g = gid[order]
            if self.take_largest:
                ends = np.flatnonzero(np.append(sorted_g[1:] != sorted_g[:-1], True))
            else:
                ends = np.flatnonzero(np.insert(sorted_g[1:] != sorted_g[:-1], 0, True))
            index[sorted_g[ends]] = selected[order[ends]]
        return take_or_null(values, index)


class MaxAgg(_Extreme):
    name = "max"


class MinAgg(_Extreme):
    name = "min"
    take_largest = False


# ----------------------------------------------------------------------- arithmetic


class _Arithmetic(FieldAggregator):
    """``sum``/``product`` on DECIMAL, TINYINT..BIGINT, FLOAT, DOUBLE."""

    def __init__(self, field: str, data_type: DataType, arrow_type: pa.DataType) -> None:
        super().__init__(field, data_type, arrow_type)
        self.bits = _INT_BITS.get(arrow_type)
        self.float32 = arrow_type == pa.float32()
        self.decimal = pa.types.is_decimal(arrow_type)

    def _num(self, value: Any) -> Any:
        return np.float32(value) if self.float32 else value

    def _out(self, value: Any) -> Any:
        if isinstance(value, np.floating):
            return float(value)
        return value

    def _exact(self, a: int, op: str, b: int | None = None) -> int:
        """``a op b`` (``-a`` without ``b``) on the column's integer type, as the latest
        Paimon's ``*Exact`` helpers: an overflow fails the merge with Java's message and the
        field's name."""
        assert self.bits is not None
        if b is None:
            value, text = -a, f"-{a}"
        else:
            if op == "/":
                if b == 0:
                    raise MergeError(
                        f"/ by zero (aggregate function '{self.name}' of field '{self.field}')"
                    )
                value = _java_div(a, b)
            else:
                value = a + b if op == "+" else a - b if op == "-" else a * b
            text = f"{a} {op} {b}"
        half = 1 << (self.bits - 1)
        if -half <= value < half:
            return value
        if self.bits <= 16:  # Java computes bytes and shorts in int, and shows the result
            text += f" = {value}"
        raise MergeError(
            f"{_JAVA_INT[self.bits]} overflow: {text} (aggregate function '{self.name}' of "
            f"field '{self.field}')"
        )

    def _cannot_overflow(self, values: pa.Array, ok: np.ndarray, groups: Groups) -> bool:
        """No group of ``values`` can overflow an integer fold (sum or product) at any step:
        its sum and product of absolute values stay below half the type's range (checked
        in float64, with room for its rounding)."""
        assert self.bits is not None
        magnitude = np.abs(
            np.asarray(pc.fill_null(values, 0).to_numpy(zero_copy_only=False), np.float64)
        )
        magnitude = np.where(ok, magnitude, 0.0)
        limit = float(1 << (self.bits - 2))
        with np.errstate(all="ignore"):
            sums = np.add.reduceat(magnitude, groups.starts)
            products = np.multiply.reduceat(
                np.where(ok, np.maximum(magnitude, 1.0), 1.0), groups.starts
            )
        return bool((sums < limit).all() and (products < limit).all())

    def _fold_numbers(
        self,
        values: pa.Array,
        present: np.ndarray,
        retract: np.ndarray,
        groups: Groups,
        step: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray],
        first: Callable[[np.ndarray, np.ndarray], np.ndarray],
        retraction_starts: bool = True,
    ) -> pa.Array:
        """Fold rank by rank over all groups at once: rank j of every group with more than j
        rows is one vector operation, so records combine in exactly Java's order."""
        dtype = np.float32 if self.float32 else (np.float64 if self.bits is None else np.int64)
        numbers = np.asarray(pc.fill_null(values, 0).to_numpy(zero_copy_only=False)).astype(dtype)
        ok = present & valid_of(values)
        lengths = groups.lengths
        order = np.argsort(-lengths, kind="stable")
        descending = -lengths[order]
        starts = groups.starts[order]
        acc = np.zeros(len(groups), dtype)
        has = np.zeros(len(groups), bool)
        with np.errstate(all="ignore"):
            for j in range(int(lengths.max()) if len(lengths) else 0):
                m = int(np.searchsorted(descending, -j, side="left"))
                rows = starts[:m] + j
                x, r, use = numbers[rows], retract[rows], ok[rows]
                a, h = acc[:m], has[:m]
                if not retraction_starts:  # a retraction onto nothing leaves nothing
                    use = use & (h | ~r)
                new = np.where(h, step(a, x, r, use & h), first(x, r))
                acc[:m] = np.where(use, new, a)
                has[:m] = h | use
        result = np.empty_like(acc)
        result[order] = acc
        valid = np.empty_like(has)
        valid[order] = has
        return pa.array(result, type=self.arrow_type, mask=~valid)


class SumAgg(_Arithmetic):
    name = "sum"
    supports_retract = True

    def _add(self, a: Any, b: Any, sign: int) -> Any:
        if self.decimal:
            total = a + b if sign > 0 else a - b
            precision = self.arrow_type.precision
            if precision <= 18:
                # Java adds the unscaled longs without a precision check: it would store a
                # value wider than the column, which Arrow (and Spark) cannot hold.
                if _from_big_decimal(total, precision, self.arrow_type.scale) is None:
                    raise MergeError(
                        f"sum of DECIMAL({precision}, {self.arrow_type.scale}) column "
                        f"'{self.field}' overflows: {total}"
                    )
                return total
            return _from_big_decimal(total, precision, self.arrow_type.scale)
        if self.bits is not None:
            return self._exact(a, "+" if sign > 0 else "-", b)
        a, b = self._num(a), self._num(b)
        with np.errstate(all="ignore"):  # IEEE results (inf, nan), as Java's
            return self._out(a + b if sign > 0 else a - b)

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        return self._add(acc, value, 1)

    def retract(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            if acc is not None or value is None:
                return acc
            if self.bits is not None:
                return self._exact(value, "-")
            return self._out(-self._num(value))
        return self._add(acc, value, -1)

    def reduce(
        self, values: pa.Array, present: np.ndarray, retract: np.ndarray, groups: Groups
    ) -> pa.Array:
        if self.decimal:
            return super().reduce(values, present, retract, groups)
        if self.bits is not None:
            ok = present & valid_of(values)
            if not self._cannot_overflow(values, ok, groups):
                return super().reduce(values, present, retract, groups)  # fails where Java does
            numbers = np.asarray(pc.fill_null(values, 0).to_numpy(zero_copy_only=False))
            signed = np.where(retract, -numbers.astype(np.int64), numbers.astype(np.int64))
            total = np.add.reduceat(np.where(ok, signed, 0), groups.starts)
            result = total.astype(_NUMPY_INT[self.bits])
            return pa.array(result, type=self.arrow_type, mask=~groups.any(ok))
        return self._fold_numbers(
            values,
            present,
            retract,
            groups,
            lambda a, x, r, _: np.where(r, a - x, a + x),
            lambda x, r: np.where(r, -x, x),
        )


class ProductAgg(_Arithmetic):
    name = "product"
    supports_retract = True

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        if self.decimal:
            return _from_big_decimal(
                _WIDE.multiply(acc, value), self.arrow_type.precision, self.arrow_type.scale
            )
        if self.bits is not None:
            return self._exact(acc, "*", value)
        with np.errstate(all="ignore"):
            return self._out(self._num(acc) * self._num(value))

    def retract(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            # Paimon 1.0 on (#4842); 0.9 took the retracted value when there was nothing.
            return acc
        if self.decimal:
            context = decimal.Context(prec=120, traps=[decimal.Inexact, decimal.DivisionByZero])
            try:
                quotient = context.divide(acc, value)
            except decimal.Inexact:
                raise MergeError(
                    f"Non-terminating decimal expansion; no exact representable decimal result "
                    f"(product retraction of '{self.field}': {acc} / {value})"
                ) from None
            except (decimal.DivisionByZero, decimal.InvalidOperation):
                raise MergeError("Division by zero") from None
            return _from_big_decimal(quotient, self.arrow_type.precision, self.arrow_type.scale)
        if self.bits is not None:
            return self._exact(acc, "/", value)
        with np.errstate(all="ignore"):
            return self._out(np.divide(self._num(acc), self._num(value)))

    def reduce(
        self, values: pa.Array, present: np.ndarray, retract: np.ndarray, groups: Groups
    ) -> pa.Array:
        if self.decimal:
            return super().reduce(values, present, retract, groups)
        if self.bits is not None:
            ok = present & valid_of(values)
            if (ok & retract).any() or not self._cannot_overflow(values, ok, groups):
                return super().reduce(values, present, retract, groups)  # fails where Java does
            numbers = np.asarray(pc.fill_null(values, 1).to_numpy(zero_copy_only=False))
            total = np.multiply.reduceat(np.where(ok, numbers.astype(np.int64), 1), groups.starts)
            result = total.astype(_NUMPY_INT[self.bits])
            return pa.array(result, type=self.arrow_type, mask=~groups.any(ok))
        return self._fold_numbers(
            values,
            present,
            retract,
            groups,
            lambda a, x, r, _: np.where(r, a / x, a * x),
            lambda x, r: x,
            retraction_starts=False,
        )


# ---------------------------------------------------------------------- booleans


class _BoolAgg(FieldAggregator):
    conjunction: ClassVar[bool] = True

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return acc if value is None else value
        return (acc and value) if self.conjunction else (acc or value)

    def reduce(
        self, values: pa.Array, present: np.ndarray, retract: np.ndarray, groups: Groups
    ) -> pa.Array:
        self.check_retract(present, retract)
        ok = present & valid_of(values)
        bools = np.asarray(pc.fill_null(values, self.conjunction).to_numpy(zero_copy_only=False))
        bools = np.where(ok, bools.astype(bool), self.conjunction)
        reduce = np.logical_and if self.conjunction else np.logical_or
        result = reduce.reduceat(bools, groups.starts) if len(groups) else bools[:0]
        return pa.array(result, type=pa.bool_(), mask=~groups.any(ok))


class BoolAndAgg(_BoolAgg):
    name = "bool_and"


class BoolOrAgg(_BoolAgg):
    name = "bool_or"
    conjunction = False


# ------------------------------------------------------------------------ strings


# Java's ``Character.isWhitespace``, which ``StringUtils.isBlank`` tests on every char: the
# Unicode space separators but the no-break ones (U+00A0, U+2007, U+202F), \t \n \v \f \r
# and the separators \x1c-\x1f.
_JAVA_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2008\u2009\u200a\u2028\u2029\u205f\u3000"
)
_BLANK_PATTERN = (
    r"^[\t\n\x0b\x0c\r\x1c-\x1f \x{1680}\x{2000}-\x{2006}\x{2008}-\x{200a}\x{2028}"
    r"\x{2029}\x{205f}\x{3000}]*$"
)


def is_blank(value: str) -> bool:
    """Paimon's ``StringUtils.isBlank``: empty, or only Java whitespace."""
    return all(c in _JAVA_WHITESPACE for c in value)


class ListaggAgg(FieldAggregator):
    """Non-blank strings joined with the delimiter: null, empty and whitespace-only values
    are skipped (Paimon 2.0; 0.9 to 1.4 joined empty strings too). With
    ``fields.<f>.distinct`` (Paimon 1.x) tokens already present and blank tokens are
    skipped as well."""

    name = "listagg"

    def __init__(
        self,
        field: str,
        data_type: DataType,
        arrow_type: pa.DataType,
        delimiter: str,
        distinct: bool,
    ) -> None:
        super().__init__(field, data_type, arrow_type)
        self.delimiter = delimiter
        self.distinct = distinct

    def agg(self, acc: Any, value: Any) -> Any:
        if value is None or is_blank(value):
            return acc
        if acc is None or is_blank(acc):
            return value
        if not self.distinct:
            return acc + self.delimiter + value
        seen = set(acc.split(self.delimiter))
        out = [acc]
        for token in value.split(self.delimiter):
            if is_blank(token) or token in seen:
                continue
            seen.add(token)
            out.append(token)
        return self.delimiter.join(out)

    def reduce(
        self, values: pa.Array, present: np.ndarray, retract: np.ndarray, groups: Groups
    ) -> pa.Array:
        if self.distinct:
            return super().reduce(values, present, retract, groups)
        self.check_retract(present, retract)
        values = values.cast(pa.string())
        blank = pc.match_substring_regex(values, _BLANK_PATTERN).fill_null(True)
        ok = present & ~np.asarray(blank.to_numpy(zero_copy_only=False), dtype=bool)
        counts = groups.count(ok)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        chosen = values.take(pa.array(np.flatnonzero(ok)))
        lists = pa.ListArray.from_arrays(pa.array(offsets), chosen)
        joined = pc.binary_join(lists, self.delimiter)
        return pc.if_else(pa.array(counts > 0), joined, pa.scalar(None, pa.string())).cast(
            self.arrow_type
        )


# ------------------------------------------------------------------ nested values


class CollectAgg(FieldAggregator):
    """Arrays concatenated (``distinct``: each element once); retraction removes one
    occurrence of each retracted element."""

    name = "collect"
    supports_retract = True

    def __init__(
        self, field: str, data_type: DataType, arrow_type: pa.DataType, distinct: bool
    ) -> None:
        super().__init__(field, data_type, arrow_type)
        self.distinct = distinct

    def agg_reversed(self, acc: Any, value: Any) -> Any:
        return self.agg(acc, value)  # as Java: the accumulator is already distinct

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None and value is None:
            return None
        if (acc is None or value is None) and not self.distinct:
            return value if acc is None else acc
        out = list(acc or [])
        if not self.distinct:
            return out + list(value or [])
        result: list[Any] = []
        for element in [*out, *(value or [])]:
            if element not in result:
                result.append(element)
        return result

    def retract(self, acc: Any, value: Any) -> Any:
        if acc is None:
            return None
        pending = list(value or [])
        out = []
        for element in acc:
            if element in pending:
                pending.remove(element)
            else:
                out.append(element)
        return out


class MergeMapAgg(FieldAggregator):
    """Maps merged, later entries replacing earlier ones; retraction removes the keys."""

    name = "merge_map"
    supports_retract = True

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        merged = dict(acc)
        merged.update(value)
        return list(merged.items())

    def retract(self, acc: Any, value: Any) -> Any:
        if acc is None:
            return None
        gone = {k for k, _ in value or []}
        return [(k, v) for k, v in acc if k not in gone]


class NestedUpdateAgg(FieldAggregator):
    """``nested_update`` (the latest Paimon's ``FieldNestedUpdateAgg``): an ARRAY<ROW> column
    holding a nested table. Null elements are dropped.

    * Without ``fields.<f>.nested-key`` the rows are appended: the accumulator's, then the
      input's, at most ``fields.<f>.count-limit`` of them (default: Java's
      ``Integer.MAX_VALUE``); an accumulator that already holds that many elements (nulls
      counted, as Java's ``size()``) is kept as it is. A retraction removes every row equal to
      a retracted one.
    * With a nested key a row replaces the row of its key, unless
      ``fields.<f>.nested-sequence-field`` is set and its values are smaller (nulls
      smallest) than the row's it would replace; a row of a new key is added while the input
      has made fewer than ``count-limit`` keys. ``fields.<f>.nested-key-null-strategy``: a
      key with a null field takes part (``merge``, the default), is skipped (``ignore``) or
      fails the merge (``error``). A retraction removes the rows of the retracted keys.

    Keys and equality compare as Java's ``BinaryRow`` (FLOAT/DOUBLE by their bits: -0.0 is
    not 0.0, NaN is NaN). Paimon 0.9 has neither ``count-limit``,
    ``nested-sequence-field`` nor the null strategy, and keeps null elements."""

    name = "nested_update"
    supports_retract = True

    def __init__(
        self,
        field: str,
        data_type: DataType,
        arrow_type: pa.DataType,
        nested_key: tuple[str, ...],
        null_strategy: str | None = None,
        sequence_fields: tuple[str, ...] = (),
        count_limit: str | None = None,
    ) -> None:
        super().__init__(field, data_type, arrow_type)
        assert data_type.element is not None and data_type.element.fields is not None
        fields = data_type.element.fields
        names = [f.name for f in fields]
        # FieldNestedUpdateAggFactory.checkOptionDependencies
        if null_strategy is not None and not nested_key:
            raise SchemaError(
                "Option 'fields.<field-name>.nested-key-null-strategy' requires "
                "'fields.<field-name>.nested-key' to be configured."
            )
        if sequence_fields and not nested_key:
            raise SchemaError(
                "Option 'fields.<field-name>.nested-sequence-field' requires "
                "'fields.<field-name>.nested-key' to be configured."
            )
        for what, wanted in (
            ("Nested key", nested_key),
            ("Nested sequence field", sequence_fields),
        ):
            missing = [k for k in wanted if k not in names]
            if missing:
                raise SchemaError(f"{what} {missing} of field '{field}' not in {names}")
        self.nested_key = nested_key
        self.sequence_fields = sequence_fields
        self.null_strategy = _null_strategy(field, null_strategy)
        self.count_limit = _count_limit(field, count_limit)
        self.names = names
        self.floats = frozenset(f.name for f in fields if f.type.root in ("FLOAT", "DOUBLE"))

    def _value(self, row: dict[str, Any], name: str) -> Any:
        value = row[name]
        return order_key(value) if value is not None and name in self.floats else value

    def _key(self, row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(self._value(row, k) for k in self.nested_key)

    def _keeps(self, key: tuple[Any, ...]) -> bool:
        """``applyNestedKeyNullStrategy``."""
        if all(k is not None for k in key) or self.null_strategy == "merge":
            return True
        if self.null_strategy == "ignore":
            return False
        raise MergeError("Nested key contains null values. Primary key fields must not be null.")

    def _not_older(self, new: dict[str, Any], old: dict[str, Any]) -> bool:
        """The sequence fields of ``new`` compare >= those of ``old`` (nulls first)."""
        for name in self.sequence_fields:
            a, b = self._value(new, name), self._value(old, name)
            if a == b:
                continue
            if a is None or b is None:
                return b is None
            return bool(a > b)
        return True

    def _put(self, rows: dict[tuple[Any, ...], Any], row: Any, limit_new_keys: bool) -> None:
        """``addNestedRows`` of one element."""
        if row is None:
            return
        key = self._key(row)
        if not self._keeps(key):
            return
        existing = rows.get(key)
        if existing is not None:
            if not self.sequence_fields or self._not_older(row, existing):
                rows[key] = row
        elif not limit_new_keys or len(rows) < self.count_limit:
            rows[key] = row

    def agg(self, acc: Any, value: Any) -> Any:
        if value is None:
            return acc
        if not self.nested_key:
            added = [r for r in value if r is not None]
            if acc is None:
                return added[: max(self.count_limit, 0)]
            if len(acc) >= self.count_limit:
                return acc
            return [r for r in acc if r is not None] + added[: self.count_limit - len(acc)]
        rows: dict[tuple[Any, ...], Any] = {}
        for row in acc or ():
            self._put(rows, row, limit_new_keys=False)
        for row in value:
            self._put(rows, row, limit_new_keys=True)
        return list(rows.values())

    def retract(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return acc
        if not self.nested_key:
            rows = [r for r in acc if r is not None]
            for gone in value:
                if gone is not None:
                    same = self._whole(gone)
                    rows = [r for r in rows if self._whole(r) != same]
            return rows
        by_key: dict[tuple[Any, ...], Any] = {}
        for row in acc:
            if row is not None and self._keeps(key := self._key(row)):
                by_key[key] = row
        for row in value:
            if row is not None and self._keeps(key := self._key(row)):
                by_key.pop(key, None)
        return list(by_key.values())

    def _whole(self, row: dict[str, Any]) -> tuple[Any, ...]:
        """A row as Java's ``RecordEqualiser`` compares it."""
        return tuple(self._value(row, n) for n in self.names)


def _count_limit(field: str, value: str | None) -> int:
    """``fields.<f>.count-limit``: a Java ``int``, default ``Integer.MAX_VALUE``."""
    if value is None:
        return 2**31 - 1
    try:
        limit = int(value.strip())
    except ValueError:
        limit = None
    if limit is None or not -(2**31) <= limit < 2**31:
        raise SchemaError(
            f"Could not parse value '{value}' for key 'fields.{field}.count-limit' as an integer"
        )
    return limit


class RoaringBitmap32Agg(FieldAggregator):
    """``rbm32``: the union of serialized 32-bit RoaringBitmaps, serialized as Java does
    (run-optimized portable format), through ``pyroaring``."""

    name = "rbm32"

    def __init__(self, field: str, data_type: DataType, arrow_type: pa.DataType) -> None:
        super().__init__(field, data_type, arrow_type)
        try:
            from pyroaring import BitMap
        except ImportError:  # pragma: no cover - depends on the environment
            raise UnsupportedFeature(
                f"Aggregate function 'rbm32' of field '{field}' needs the pyroaring package"
            ) from None
        self.bitmap = BitMap

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        union = self.bitmap.deserialize(acc) | self.bitmap.deserialize(value)
        union.run_optimize()
        return union.serialize()


class MergeMapWithKeyTimeAgg(FieldAggregator):
    """``merge_map_with_keytime`` (``FieldMergeMapWithKeyTimeAgg``): maps of ROW values, an
    entry replaced only by a row whose timestamp field (``fields.<f>.ts-field``, else the
    row's last field) is a greater string; a null row removes its key, a row with a null
    timestamp is skipped. The first map of a key is taken as it is."""

    name = "merge_map_with_keytime"

    def __init__(
        self, field: str, data_type: DataType, arrow_type: pa.DataType, ts_field: str | None
    ) -> None:
        super().__init__(field, data_type, arrow_type)
        assert data_type.value is not None and data_type.value.fields is not None
        fields = data_type.value.fields
        names = [f.name for f in fields]
        if ts_field is None:
            ts_field = names[-1]
        elif ts_field not in names:
            raise SchemaError(
                f"Timestamp field '{ts_field}' not found in ROW type for field '{field}'. "
                f"Available fields: [{', '.join(names)}]"
            )
        self.ts_field = ts_field
        self.ts_is_string = fields[names.index(ts_field)].type.root in ("CHAR", "VARCHAR")

    def _newer(self, new: str, existing: str) -> bool:
        """Java's ``String.compareTo`` (UTF-16 code units) ``> 0``."""
        if not self.ts_is_string:
            raise MergeError(
                f"Timestamp field '{self.ts_field}' of field '{self.field}' is compared as a "
                "string (Paimon's getString), but is not one"
            )
        return new.encode("utf-16-be") > existing.encode("utf-16-be")

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        merged = dict(acc)
        for key, row in value:
            if row is None:
                merged.pop(key, None)
                continue
            new_ts = row[self.ts_field]
            if new_ts is None:
                continue
            existing = merged.get(key)
            if existing is None or existing[self.ts_field] is None:
                merged[key] = row
            elif self._newer(new_ts, existing[self.ts_field]):
                merged[key] = row
        return list(merged.items())


_NULL_STRATEGIES = ("merge", "ignore", "error")


class NestedPartialUpdateAgg(FieldAggregator):
    """``nested_partial_update`` (``FieldNestedPartialUpdateAgg``): ARRAY<ROW> rows merged by
    ``fields.<f>.nested-key``, each later row's non-null fields updating the row of its key.
    ``fields.<f>.nested-key-null-strategy``: a key with a null field merges (``merge``, the
    default), is dropped (``ignore``) or fails the merge (``error``)."""

    name = "nested_partial_update"

    def __init__(
        self,
        field: str,
        data_type: DataType,
        arrow_type: pa.DataType,
        nested_key: tuple[str, ...],
        null_strategy: str | None,
    ) -> None:
        super().__init__(field, data_type, arrow_type)
        assert data_type.element is not None and data_type.element.fields is not None
        if not nested_key:
            raise SchemaError(
                f"Aggregate function 'nested_partial_update' of field '{field}' needs "
                f"'fields.{field}.nested-key'"
            )
        self.names = [f.name for f in data_type.element.fields]
        missing = [k for k in nested_key if k not in self.names]
        if missing:
            raise SchemaError(f"Nested key {missing} of field '{field}' not in {self.names}")
        self.nested_key = nested_key
        self.null_strategy = _null_strategy(field, null_strategy)

    def agg(self, acc: Any, value: Any) -> Any:
        if value is None:
            return acc
        merged: dict[tuple[Any, ...], dict[str, Any]] = {}
        for row in [*(acc or []), *value]:
            if row is None:
                continue
            key = tuple(row[k] for k in self.nested_key)
            if any(k is None for k in key):
                if self.null_strategy == "ignore":
                    continue
                if self.null_strategy == "error":
                    raise MergeError(
                        "Nested key contains null values. Primary key fields must not be null."
                    )
            target = merged.setdefault(key, dict.fromkeys(self.names))
            for name, v in row.items():
                if v is not None:
                    target[name] = v
        return list(merged.values())


def _null_strategy(field: str, value: str | None) -> str:
    """``fields.<f>.nested-key-null-strategy`` (Java's enum option: case-insensitive)."""
    if value is None:
        return "merge"
    strategy = value.strip().lower()
    if strategy not in _NULL_STRATEGIES:
        raise SchemaError(
            f"Could not parse value '{value}' for key 'fields.{field}.nested-key-null-strategy' "
            f"(one of {list(_NULL_STRATEGIES)})"
        )
    return strategy


class _BinaryUnionAgg(FieldAggregator):
    """VARBINARY values unioned two at a time, the first value of a key kept as it is."""

    def union(self, acc: bytes, value: bytes) -> bytes:
        raise NotImplementedError

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        return self.union(acc, value)


class ThetaSketchAgg(_BinaryUnionAgg):
    """``theta_sketch``: the union of serialized DataSketches theta sketches
    (``ThetaSketch.union``)."""

    name = "theta_sketch"

    def union(self, acc: bytes, value: bytes) -> bytes:
        try:
            return sketches.theta_union_bytes(acc, value)
        except ValueError as e:
            raise MergeError(f"theta_sketch of field '{self.field}': {e}") from None


class HllSketchAgg(_BinaryUnionAgg):
    """``hll_sketch``: the union of serialized DataSketches HLL sketches
    (``HllSketchUtil.union``), an HLL_4 sketch."""

    name = "hll_sketch"

    def union(self, acc: bytes, value: bytes) -> bytes:
        try:
            return sketches.hll_union_bytes(acc, value)
        except ValueError as e:
            raise MergeError(f"hll_sketch of field '{self.field}': {e}") from None


class RoaringBitmap64Agg(_BinaryUnionAgg):
    """``rbm64``: the union of serialized ``RoaringBitmap64`` (Java's ``Roaring64Bitmap``
    format, see ``format/roaring_bitmap64.py``)."""

    name = "rbm64"

    def _read(self, data: bytes) -> RoaringBitmap64:
        try:
            return RoaringBitmap64.deserialize(data)
        except RoaringFormatError as e:
            raise MergeError(
                f"Unable to se/deserialize roaring bitmap (field '{self.field}'): {e}"
            ) from None

    def union(self, acc: bytes, value: bytes) -> bytes:
        return self._read(acc).or_(self._read(value)).serialize()

    def reduce(
        self, values: pa.Array, present: np.ndarray, retract: np.ndarray, groups: Groups
    ) -> pa.Array:
        """Java's fold, without its bytes between the steps: a step's
        ``deserialize(serialize(acc))`` is ``acc`` run-optimized."""
        self.check_retract(present, retract)
        py = values.to_pylist()
        out = []
        for start, end in zip(groups.starts.tolist(), groups.ends.tolist()):
            first: bytes | None = None
            acc: RoaringBitmap64 | None = None
            for i in range(start, end):
                if not present[i] or py[i] is None:
                    continue
                if first is None:
                    first = py[i]
                    continue
                acc = (acc or self._read(first)).or_(self._read(py[i])).run_optimize()
            out.append(acc.serialize() if acc is not None else first)
        return pa.array(out, type=self.arrow_type)


_SIMPLE: dict[str, type[FieldAggregator]] = {
    "sum": SumAgg,
    "product": ProductAgg,
    "max": MaxAgg,
    "min": MinAgg,
    "last_value": LastValueAgg,
    "last_non_null_value": LastNonNullValueAgg,
    "first_value": FirstValueAgg,
    "first_non_null_value": FirstNonNullValueAgg,
    "first_not_null_value": FirstNonNullValueAgg,
    "bool_and": BoolAndAgg,
    "bool_or": BoolOrAgg,
    "merge_map": MergeMapAgg,
    "rbm32": RoaringBitmap32Agg,
    "rbm64": RoaringBitmap64Agg,
    "theta_sketch": ThetaSketchAgg,
    "hll_sketch": HllSketchAgg,
    "primary-key": PrimaryKeyAgg,
}


def create_aggregator(
    function: str,
    field: str,
    data_type: DataType,
    arrow_type: pa.DataType,
    config: FieldAggregation,
) -> FieldAggregator:
    """Java's ``FieldAggregator.createFieldAggregator``: ``function`` on ``field``, wrapped to
    ignore retractions when ``fields.<f>.ignore-retract`` is set.

    Raises:
        SchemaError: the function cannot take the column's type or its options (Java's
            messages).
        UnsupportedFeature: a function Paimon does not have.
    """
    check_aggregate_type(function, field, data_type)
    aggregator: FieldAggregator
    if function == "listagg":
        aggregator = ListaggAgg(field, data_type, arrow_type, config.delimiter, config.distinct)
    elif function == "collect":
        aggregator = CollectAgg(field, data_type, arrow_type, config.distinct)
    elif function == "nested_update":
        aggregator = NestedUpdateAgg(
            field,
            data_type,
            arrow_type,
            config.nested_key,
            config.nested_key_null_strategy,
            config.nested_sequence_field,
            config.count_limit,
        )
    elif function == "nested_partial_update":
        aggregator = NestedPartialUpdateAgg(
            field, data_type, arrow_type, config.nested_key, config.nested_key_null_strategy
        )
    elif function == "merge_map_with_keytime":
        aggregator = MergeMapWithKeyTimeAgg(field, data_type, arrow_type, config.ts_field)
    elif function in _SIMPLE:
        aggregator = _SIMPLE[function](field, data_type, arrow_type)
    else:
        raise UnsupportedFeature(
            f"Use unsupported aggregation: {function} or spell aggregate function incorrectly!"
        )
    if config.ignore_retract:
        aggregator = IgnoreRetractAgg(aggregator)
    return aggregator
