"""Auto-tag names and the periods they stand for: Paimon's ``TagPeriodHandler``.

Both automatic tag creation and manual tag creation (which refuses a second auto-named tag of a
snapshot) need it, so it lives apart from either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgument

if TYPE_CHECKING:
    from paimon_core.format.options import CoreOptions

__all__ = ["TagPeriodHandler", "auto_tag_period_handler", "period_handler"]

_EPOCH = datetime(1970, 1, 1)
_MS = timedelta(milliseconds=1)

_D4, _D2 = "([0-9]{4})", "([0-9]{2})"
# name -> (pattern, format of (year, month, day, hour, minute)[:fields])
_FORMATS: dict[str, tuple[re.Pattern[str], str]] = {
    "day": (re.compile(f"{_D4}-{_D2}-{_D2}"), "{:04d}-{:02d}-{:02d}"),
    "day_compact": (re.compile(f"{_D4}{_D2}{_D2}"), "{:04d}{:02d}{:02d}"),
    "hour": (re.compile(f"{_D4}-{_D2}-{_D2} {_D2}"), "{:04d}-{:02d}-{:02d} {:02d}"),
    "hour_no_dashes": (re.compile(f"{_D4}{_D2}{_D2} {_D2}"), "{:04d}{:02d}{:02d} {:02d}"),
    "hour_compact": (re.compile(f"{_D4}{_D2}{_D2}{_D2}"), "{:04d}{:02d}{:02d}{:02d}"),
    "minute": (re.compile(f"{_D4}{_D2}{_D2}{_D2}{_D2}"), "{:04d}{:02d}{:02d}{:02d}{:02d}"),
}
_HOURLY = {
    "with_dashes": "hour",
    "without_dashes": "hour_no_dashes",
    "without_dashes_and_spaces": "hour_compact",
}


@dataclass(frozen=True, slots=True)
class TagPeriodHandler:
    """Maps period start times to auto-tag names and back (Paimon's ``TagPeriodHandler``)."""

    period: timedelta
    layout: str
    # Daily handlers parse only the text before the first space (so '2024-01-01 10' counts).
    date_only: bool = False

    def validate_delay(self, delay: timedelta) -> None:
        if delay >= self.period:
            raise InvalidArgument(
                f"tag.creation-delay ({delay}) must be less than one tag period ({self.period})."
            )

    def tag_to_time(self, name: str) -> datetime:
        """The period start a tag name stands for; ``ValueError`` if it is not an auto tag."""
        pattern, _ = _FORMATS[self.layout]
        text = name.split(" ")[0] if self.date_only else name
        match = pattern.fullmatch(text)
        if match is None:
            raise ValueError(f"'{name}' is not a {self.layout} tag name")
        return datetime(*map(int, match.groups()))

    def is_auto_tag(self, name: str) -> bool:
        try:
            self.tag_to_time(name)
        except ValueError:
            return False
        return True

    def time_to_tag(self, time: datetime) -> str:
        pattern, fmt = _FORMATS[self.layout]
        fields = (time.year, time.month, time.day, time.hour, time.minute)
        return fmt.format(*fields[: pattern.groups])

    def normalize_to_previous_tag(self, time: datetime) -> datetime:
        """Start of the period before the one holding ``time`` (epoch-aligned, as Paimon)."""
        millis = (time - _EPOCH) // _MS
        period = self.period // _MS
        start = abs(millis) // period * period * (1 if millis >= 0 else -1)  # Java's `/`
        return _EPOCH + timedelta(milliseconds=start) - self.period

    def next_tag_time(self, time: datetime) -> datetime:
        return time + self.period

    def previous_tag_time(self, time: datetime) -> datetime:
        return time - self.period


def period_handler(options: CoreOptions) -> TagPeriodHandler:
    """The handler of ``tag.creation-period`` / ``-period-duration`` / ``tag.period-formatter``."""
    duration = options.tag_creation_period_duration
    if duration is not None:
        if duration < _MS:
            raise InvalidArgument(f"tag.creation-period-duration must be positive: {duration}")
        return TagPeriodHandler(duration, "minute")
    period = options.tag_creation_period
    if period == "daily":
        fmt = "day" if options.tag_period_formatter == "with_dashes" else "day_compact"
        return TagPeriodHandler(timedelta(days=1), fmt, date_only=True)
    if period == "hourly":
        return TagPeriodHandler(timedelta(hours=1), _HOURLY[options.tag_period_formatter])
    return TagPeriodHandler(timedelta(hours=2), "hour")


def auto_tag_period_handler(options: CoreOptions) -> TagPeriodHandler | None:
    """The handler when auto-creation is ``process-time``/``watermark``, else None."""
    if options.tag_automatic_creation not in ("process-time", "watermark"):
        return None
    return period_handler(options)
