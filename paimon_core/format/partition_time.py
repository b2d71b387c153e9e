"""The time of a partition, from its values: Paimon's ``PartitionTimeExtractor``.

``partition.timestamp-pattern`` builds a text from the values (``$dt $hour:00:00``; without a
pattern the first partition value), ``partition.timestamp-formatter`` parses it with Java's
``DateTimeFormatter.ofPattern`` rules (SMART resolution; a text without a time is midnight);
without a formatter Java's lenient ``yyyy-MM-dd[ HH:mm:ss[.fraction]]`` applies.

The formatter grammar here is the part of Java's that dates use: ``y``/``u`` years (``yy``:
2000-2099), ``M``/``L`` months (numeric, ``MMM`` short and ``MMMM`` full English names),
``d``, ``H``, ``m``, ``s``, ``S`` fractions, quoted literals and any other non-letter
character. Other letters (week fields, am/pm hours, zones, optional sections) are refused
with ``UnsupportedFeature`` rather than read differently from Java.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from paimon_core.exceptions import InvalidArgument, UnsupportedFeature

__all__ = ["JavaDateTimeFormatter", "PartitionTimeExtractor", "parse_default_timestamp"]

_MONTHS_FULL = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_MONTHS_SHORT = tuple(name[:3] for name in _MONTHS_FULL)  # Locale.ROOT, case-sensitive
_SUPPORTED = "yuMLdHmsS"
_DEFAULT_TIMESTAMP = re.compile(
    r"(\d{1,10})-(\d{1,2})-(\d{1,2})(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?)?"
)


@dataclass(frozen=True)
class JavaDateTimeFormatter:
    """A compiled ``DateTimeFormatter.ofPattern(pattern)`` for parsing dates and times."""

    pattern: str
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)
    fields: tuple[tuple[str, int], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts: list[str] = []
        fields: list[tuple[str, int]] = []
        text, i, n = self.pattern, 0, len(self.pattern)
        while i < n:
            c = text[i]
            if c == "'":
                end = i + 1
                literal = []
                while True:
                    if end >= n:
                        raise InvalidArgument(
                            f"Pattern ends with an incomplete string literal: {text}"
                        )
                    if text[end] == "'":
                        if end + 1 < n and text[end + 1] == "'":
                            literal.append("'")
                            end += 2
                            continue
                        break
                    literal.append(text[end])
                    end += 1
                parts.append(re.escape("".join(literal) if end > i + 1 else "'"))
                i = end + 1
                continue
            if c in "{}#":
                raise InvalidArgument(f"Pattern includes reserved character: '{c}'")
            if not c.isascii() or not c.isalpha():
                if c in "[]":
                    raise UnsupportedFeature(
                        f"Optional sections ('[' ... ']') of timestamp formatter '{text}' "
                        "are not supported"
                    )
                parts.append(re.escape(c))
                i += 1
                continue
            count = 1
            while i + count < n and text[i + count] == c:
                count += 1
            parts.append(self._letter(c, count))
            fields.append((c, count))
            i += count
        object.__setattr__(self, "regex", re.compile("".join(parts)))
        object.__setattr__(self, "fields", tuple(fields))

    def _letter(self, c: str, count: int) -> str:
        if c not in _SUPPORTED:
            raise UnsupportedFeature(
                f"Pattern letter '{c}' of timestamp formatter '{self.pattern}' is not "
                f"supported (supported: {', '.join(_SUPPORTED)})"
            )
        if c in "yu":
            if count == 2:
                return r"(\d{2})"
            return rf"(\d{{{count},19}})"
        if c in "ML":
            if count > 5:
                raise InvalidArgument(f"Too many pattern letters: {c}")
            if count == 1:
                return r"(\d{1,19})"
            if count == 2:
                return r"(\d{2})"
            if count == 3:
                return "(" + "|".join(_MONTHS_SHORT) + ")"
            if count == 4:
                return "(" + "|".join(_MONTHS_FULL) + ")"
            raise UnsupportedFeature(f"Narrow month names ('{c * 5}') are not supported")
        if c == "S":
            return rf"(\d{{{count}}})"
        if count > 2:
            raise InvalidArgument(f"Too many pattern letters: {c}")
        return r"(\d{1,19})" if count == 1 else r"(\d{2})"

    def parse(self, text: str) -> datetime:
        """The text as a local date-time; a text without an hour is midnight, as Paimon's
        ``LocalDateTime.parse`` then ``LocalDate.parse`` fallback.

        Raises:
            ValueError: the text does not match or names no valid date (Java's
                ``DateTimeParseException``).
        """
        match = self.regex.fullmatch(text)
        if match is None:
            raise ValueError(f"Text '{text}' could not be parsed with pattern '{self.pattern}'")
        values: dict[str, int] = {}
        for (letter, count), group in zip(self.fields, match.groups()):
            key = {"u": "y", "L": "M"}.get(letter, letter)
            if letter in "ML" and count >= 3:
                names = _MONTHS_SHORT if count == 3 else _MONTHS_FULL
                value = names.index(group) + 1
            elif letter == "S":
                value = int(group.ljust(9, "0"))
            elif letter in "yu" and count == 2:
                value = 2000 + int(group)
            else:
                value = int(group)
            if key in values and values[key] != value:
                raise ValueError(f"Text '{text}' has conflicting values for '{letter}'")
            values[key] = value
        if "y" not in values or "M" not in values or "d" not in values:
            raise ValueError(f"Text '{text}' does not name a date with pattern '{self.pattern}'")
        return _smart(values, text)


def _smart(values: dict[str, int], text: str) -> datetime:
    """Java's SMART resolution: fields in range; a day beyond the month's length is the
    month's last day; ``24:00:00`` is the next midnight."""
    year, month, day = values["y"], values["M"], values["d"]
    if not 1 <= month <= 12 or not 1 <= day <= 31 or not 1 <= year <= 9999:
        raise ValueError(f"Text '{text}' has a field out of range")
    day = min(day, calendar.monthrange(year, month)[1])
    if "H" not in values:  # LocalDateTime fails, LocalDate succeeds: midnight
        return datetime(year, month, day)
    hour, minute, second = values["H"], values.get("m", 0), values.get("s", 0)
    nano = values.get("S", 0)
    if hour == 24 and minute == second == nano == 0:
        return datetime(year, month, day) + timedelta(days=1)
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"Text '{text}' has a field out of range")
    return datetime(year, month, day, hour, minute, second, nano // 1000)


def parse_default_timestamp(text: str) -> datetime:
    """Paimon's ``toLocalDateTimeDefault``: ``yyyy-M-d[ H:m:s[.fraction]]`` resolved
    leniently (a month 13 rolls into the next year, as Java's LENIENT style)."""
    match = _DEFAULT_TIMESTAMP.fullmatch(text)
    if match is None:
        raise ValueError(f"Text '{text}' could not be parsed as a timestamp")
    year, month, day, hour, minute, second, fraction = match.groups()
    months = int(year) * 12 + int(month) - 1
    try:
        base = datetime(months // 12, months % 12 + 1, 1)
    except ValueError:
        raise ValueError(f"Text '{text}' is out of range") from None
    delta = timedelta(days=int(day) - 1)
    if hour is not None:
        nanos = int((fraction or "0").ljust(9, "0"))
        delta += timedelta(
            hours=int(hour), minutes=int(minute), seconds=int(second), microseconds=nanos // 1000
        )
    try:
        return base + delta
    except OverflowError:
        raise ValueError(f"Text '{text}' is out of range") from None


@dataclass(frozen=True)
class PartitionTimeExtractor:
    """``partition.timestamp-pattern`` + ``partition.timestamp-formatter`` -> a time."""

    pattern: str | None = None
    formatter: str | None = None
    _compiled: JavaDateTimeFormatter | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        compiled = None if self.formatter is None else JavaDateTimeFormatter(self.formatter)
        object.__setattr__(self, "_compiled", compiled)

    def extract(self, keys: Sequence[str], values: Sequence[str | None]) -> datetime:
        """The partition's local time.

        Raises:
            ValueError: a value is null or the text does not parse (Paimon skips such a
                partition with a warning).
        """
        if self.pattern is None:
            if not values or values[0] is None:
                raise ValueError("The first partition value is null")
            text = values[0]
        else:
            text = self.pattern
            for key, value in zip(keys, values):
                if value is None:
                    raise ValueError(f"Partition value of {key} is null")
                # Java's String.replaceAll("\\$" + key, value): a regex on the key's name.
                text = re.sub(r"\$" + key, lambda _m, v=value: v, text)
        if self._compiled is None:
            return parse_default_timestamp(text)
        return self._compiled.parse(text)
