"""Where new data files go under ``data-file.external-paths`` (Java's ``ExternalPathProvider``).

With ``data-file.external-paths`` (comma-separated roots, each with a scheme) and a
``data-file.external-paths.strategy`` other than ``none``, every new data and changelog file
(and its ``.index`` file, beside it) is written under one of the roots, at
``<root>/<partition path>/bucket-<b>/<file>``, and its manifest entry records the whole path
in ``_EXTERNAL_PATH``. The strategies, as Paimon 2.0/2.1:

- ``round-robin``: the roots in turn, from a random one, per writer of a bucket;
- ``specific-fs``: round-robin over the roots whose scheme is
  ``data-file.external-paths.specific-fs`` (case-insensitive);
- ``entropy-inject``: the roots in turn, the file under three 4-bit and one 8-bit directory
  of the murmur3 hash of its name (``1001/0110/1100/10011001/<file>``);
- ``weight-robin``: a root drawn at random by ``data-file.external-paths.weights`` (as many
  positive integers as roots); round-robin with fewer than two roots or no weights.

Paths are written as Paimon's ``Path.toString`` gives them: ``file:///x`` becomes ``file:/x``.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from paimon_core.exceptions import InvalidArgument

PATHS = "data-file.external-paths"
STRATEGY = "data-file.external-paths.strategy"
SPECIFIC_FS = "data-file.external-paths.specific-fs"
WEIGHTS = "data-file.external-paths.weights"
STRATEGIES = ("none", "specific-fs", "round-robin", "entropy-inject", "weight-robin")
_HASH_BITS = 20
_DIR_LENGTH = 4
_DIR_DEPTH = 3


def _normalized(root: str) -> str:
    """``root`` as Paimon's ``Path`` prints it: no trailing slash, ``scheme:/path`` when the
    authority is empty.

    Raises:
        InvalidArgument: ``root`` has no scheme (Java: "scheme should not be null").
    """
    parts = urlsplit(root.strip())
    if not parts.scheme:
        raise InvalidArgument(f"scheme should not be null: {root.strip()} ('{PATHS}')")
    path = "/" + "/".join(p for p in parts.path.split("/") if p)
    authority = f"//{parts.netloc}" if parts.netloc else ""
    return f"{parts.scheme}:{authority}{path if path != '/' or not authority else ''}"


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit of ``data`` (Guava's ``Hashing.murmur3_32()``), unsigned."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed
    n = len(data) // 4 * 4
    for i in range(0, n, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        h ^= (k * c2) & mask
        h = ((h << 13) | (h >> 19)) & mask
        h = (h * 5 + 0xE6546B64) & mask
    tail = data[n:]
    if tail:
        k = int.from_bytes(tail, "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        h ^= (k * c2) & mask
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    return h ^ (h >> 16)


def entropy_dirs(file_name: str) -> str:
    """The directories ``entropy-inject`` puts ``file_name`` under (Java's
    ``EntropyInjectExternalPathProvider.computeHash``): the low 20 bits of the name's murmur3
    hash in binary, cut into ``4/4/4/8``."""
    bits = format(murmur3_32(file_name.encode("utf-8")) | 0x80000000, "032b")[-_HASH_BITS:]
    cut = _DIR_DEPTH * _DIR_LENGTH
    dirs = [bits[i : i + _DIR_LENGTH] for i in range(0, cut, _DIR_LENGTH)]
    return "/".join([*dirs, bits[cut:]])


@dataclass(frozen=True, slots=True)
class ExternalPaths:
    """A table's external data paths and the strategy choosing among them."""

    strategy: str
    roots: tuple[str, ...]
    weights: tuple[int, ...] | None = None

    @classmethod
    def of(cls, options: Mapping[str, str]) -> ExternalPaths | None:
        """The external paths ``options`` turn on (Java's ``AbstractFileStore.
        createExternalPaths``), or None: no paths, or strategy ``none``.

        Raises:
            InvalidArgument: an unknown strategy, a root without a scheme, ``specific-fs``
                without ``.specific-fs`` or with no root of that scheme, bad weights.
        """
        text = options.get(PATHS)
        strategy = (options.get(STRATEGY) or "none").strip().lower()
        if strategy not in STRATEGIES:
            raise InvalidArgument(
                f"Invalid '{STRATEGY}' = '{options.get(STRATEGY)}': expected one of "
                f"{', '.join(STRATEGIES)}"
            )
        if not text or not text.strip() or strategy == "none":
            return None
        roots = [_normalized(p) for p in text.split(",")]
        if strategy == "specific-fs":
            fs = (options.get(SPECIFIC_FS) or "").strip()
            if not fs:
                raise InvalidArgument(
                    "External path specificFS should not be null when strategy is specificFS "
                    f"('{SPECIFIC_FS}')."
                )
            roots = [r for r in roots if urlsplit(r).scheme.lower() == fs.lower()]
        if not roots:
            raise InvalidArgument(f"External paths should not be empty ('{PATHS}')")
        weights = None
        if strategy == "weight-robin" and options.get(WEIGHTS) is not None:
            try:
                weights = tuple(int(w.strip()) for w in str(options[WEIGHTS]).split(","))
            except ValueError:
                raise InvalidArgument(f"Invalid '{WEIGHTS}' = '{options[WEIGHTS]}'") from None
            bad = [w for w in weights if w <= 0]
            if bad:
                raise InvalidArgument(f"Weight must be positive, got: {bad[0]} ('{WEIGHTS}')")
            if len(roots) >= 2 and len(weights) != len(roots):
                raise InvalidArgument(
                    "The number of external paths and weights should be the same. Paths: "
                    f"{len(roots)}, Weights: {len(weights)}"
                )
        return cls(strategy, tuple(roots), weights)

    def provider(self, relative_bucket_path: str) -> ExternalPathProvider:
        """The chooser of one bucket's writer (``<partition path>/bucket-<b>``)."""
        return ExternalPathProvider(self, relative_bucket_path.strip("/"))


class ExternalPathProvider:
    """Gives each new file of one bucket its external path (Java's per-bucket provider)."""

    def __init__(self, paths: ExternalPaths, relative_bucket_path: str) -> None:
        self.paths = paths
        self.relative = relative_bucket_path
        n = len(paths.roots)
        self._weighted = paths.strategy == "weight-robin" and n >= 2 and paths.weights
        self._position = random.randrange(n) if paths.strategy != "entropy-inject" else 0
        self._cumulative: list[int] = []
        if self._weighted:
            total = 0
            for w in paths.weights or ():
                total += w
                self._cumulative.append(total)

    def next_path(self, file_name: str) -> str:
        """The external path of the new file ``file_name``."""
        roots = self.paths.roots
        if self._weighted:
            drawn = random.random() * self._cumulative[-1]
            root = roots[bisect.bisect_right(self._cumulative, drawn)]
        else:
            self._position = (self._position + 1) % len(roots)
            root = roots[self._position]
        name = file_name
        if self.paths.strategy == "entropy-inject":
            name = f"{entropy_dirs(file_name)}/{file_name}"
        middle = f"/{self.relative}" if self.relative else ""
        return f"{root.rstrip('/')}{middle}/{name}"
