"""Which ``FileIO`` serves a path: the one factory, above every implementation it chooses from."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from urllib.parse import urlsplit

from paimon_core.io.fileio import S3_SCHEMES, FileIO, LocalFileIO, PyArrowFileIO, is_local

_REMOTE: dict[tuple[str, str, object], PyArrowFileIO] = {}
_REMOTE_LOCK = threading.Lock()


def get_file_io(path: str, options: Mapping[str, str] | None = None) -> FileIO:
    """The ``FileIO`` for ``path``: local disk for plain paths and ``file://``, ``S3FileIO``
    for ``s3://``/``s3a://``/``s3n://`` (configured by the ``s3.*`` keys of the catalog
    ``options``), pyarrow for anything else. Remote ones are shared per bucket and settings.
    """
    if is_local(path):
        return LocalFileIO()
    parts = urlsplit(path)
    scheme = parts.scheme.lower()
    s3 = None
    if scheme in S3_SCHEMES:  # boto3 (S3FileIO's) costs a local warehouse 0.3 s of start-up
        from paimon_core.io.s3_fileio import S3Options

        s3 = S3Options.from_options(options)
    key = (scheme, parts.netloc, s3)
    io = _REMOTE.get(key)
    if io is None:
        with _REMOTE_LOCK:
            io = _REMOTE.get(key)
            if io is None:
                if s3 is not None:
                    from paimon_core.io.s3_fileio import S3FileIO

                    io = S3FileIO(path, s3)
                else:
                    io = PyArrowFileIO(path)
                _REMOTE[key] = io
    return io
