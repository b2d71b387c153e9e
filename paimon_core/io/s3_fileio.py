"""S3 (``s3://``, ``s3a://``, ``s3n://``): pyarrow for all file access, boto3 to publish.

Committers race for ``snapshot-N`` by creating it; only a create that fails when the object
exists lets exactly one of them win. pyarrow's S3 file system cannot send S3's conditional
create (``PutObject`` with ``If-None-Match: *``, honoured by AWS since 2024-08, MinIO and moto),
so ``write_no_clobber`` uses boto3, the AWS SDK for Python: its ``put_object(IfNoneMatch="*")``
(botocore 1.35.2 and later) is the documented client for that header and needs no native
build. Everything else keeps going through pyarrow's ``S3FileSystem``.

Both clients get the same settings: Paimon's catalog options ``s3.endpoint``,
``s3.access-key``, ``s3.secret-key``, ``s3.path.style.access`` and ``s3.region`` (or
``s3.endpoint.region``); what is not given comes from the AWS default chain (environment,
``~/.aws``, instance metadata), as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import boto3
import pyarrow.fs as pafs
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from paimon_core.exceptions import AtomicCreateUnsupported, InvalidArgument
from paimon_core.io.fileio import PyArrowFileIO

S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})
# Paimon's own names first; the aliases are the other spellings Paimon's S3 plugin mirrors.
_KEYS: dict[str, tuple[str, ...]] = {
    "endpoint": ("s3.endpoint",),
    "access_key": ("s3.access-key", "s3.access.key"),
    "secret_key": ("s3.secret-key", "s3.secret.key"),
    "region": ("s3.region", "s3.endpoint.region"),
    "path_style_access": ("s3.path.style.access", "s3.path-style-access"),
}
# S3 answers 409 while another conditional create of the same key is in flight: try again,
# and the loser then gets its 412.
_CONFLICT_ATTEMPTS = 5


def _option(options: Mapping[str, str], name: str) -> str | None:
    for key in _KEYS[name]:
        value = options.get(key)
        if value is not None and str(value).strip():
            return str(value).strip()
    return None


@dataclass(frozen=True, slots=True)
class S3Options:
    """The S3 settings of one warehouse, from Paimon's ``s3.*`` catalog options."""

    endpoint: str | None = None
    access_key: str | None = None
    secret_key: str | None = field(default=None, repr=False)
    region: str | None = None
    path_style_access: bool | None = None

    @classmethod
    def from_options(cls, options: Mapping[str, str] | None) -> S3Options:
        """Read the ``s3.*`` keys of catalog options (other keys are ignored).

        Raises:
            InvalidArgument: a key without its partner, or a path style that is not a boolean.
        """
        options = options or {}
        style = _option(options, "path_style_access")
        if style is not None and style.lower() not in ("true", "false"):
            raise InvalidArgument(
                f"Invalid catalog option s3.path.style.access='{style}': expected true or false"
            )
        access_key = _option(options, "access_key")
        secret_key = _option(options, "secret_key")
        if (access_key is None) != (secret_key is None):
            given, missing = (
                ("access-key", "secret-key") if access_key else ("secret-key", "access-key")
            )
            raise InvalidArgument(f"Catalog option s3.{given} is set but s3.{missing} is not")
        return cls(
            endpoint=_option(options, "endpoint"),
            access_key=access_key,
            secret_key=secret_key,
            region=_option(options, "region"),
            path_style_access=None if style is None else style.lower() == "true",
        )

    @property
    def path_style(self) -> bool:
        """Path-style addressing unless told otherwise when an endpoint is given (MinIO and
        other S3-compatible servers), virtual-hosted on AWS: pyarrow's own default."""
        if self.path_style_access is not None:
            return self.path_style_access
        return self.endpoint is not None

    @property
    def endpoint_url(self) -> str | None:
        """The endpoint with a scheme (https unless it names one), as boto3 needs it."""
        if self.endpoint is None or "://" in self.endpoint:
            return self.endpoint
        return f"https://{self.endpoint}"

    def arrow_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"force_virtual_addressing": not self.path_style}
        if self.endpoint is not None:
            kwargs["endpoint_override"] = self.endpoint_url
        if self.access_key is not None:
            kwargs["access_key"] = self.access_key
            kwargs["secret_key"] = self.secret_key
        if self.region is not None:
            kwargs["region"] = self.region
        return kwargs

    def boto3_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "config": Config(
                s3={"addressing_style": "path" if self.path_style else "virtual"},
                retries={"mode": "standard"},
            )
        }
        if self.endpoint is not None:
            kwargs["endpoint_url"] = self.endpoint_url
        if self.access_key is not None:
            kwargs["aws_access_key_id"] = self.access_key
            kwargs["aws_secret_access_key"] = self.secret_key
        if self.region is not None:
            kwargs["region_name"] = self.region
        return kwargs


class S3FileIO(PyArrowFileIO):
    """An S3 warehouse: pyarrow's ``S3FileSystem`` with S3's conditional create to publish.

    Two processes committing at once both read snapshot N-1 and both try ``snapshot-N``; the
    conditional create lets exactly one of them have it, the other retries on top of it.
    """

    def __init__(
        self,
        uri: str,
        options: S3Options | None = None,
        filesystem: pafs.FileSystem | None = None,
    ) -> None:
        self.s3_options = options or S3Options()
        if filesystem is None:
            filesystem = pafs.S3FileSystem(**self._arrow_kwargs(uri))
        super().__init__(uri, filesystem)
        self._client: Any = None

    def _arrow_kwargs(self, uri: str) -> dict[str, Any]:
        kwargs = self.s3_options.arrow_kwargs()
        if self.s3_options.region is None and self.s3_options.endpoint is None:
            # What ``FileSystem.from_uri`` does on AWS: the bucket's own region.
            kwargs["region"] = pafs.resolve_s3_region(urlsplit(uri).netloc)
        return kwargs

    def __getstate__(self) -> dict[str, Any]:
        """Without the boto3 client (not picklable); a worker builds its own on first use."""
        return {**self.__dict__, "_client": None}

    def _s3(self) -> Any:
        if self._client is None:
            kwargs = self.s3_options.boto3_kwargs()
            if "region_name" not in kwargs and self.s3_options.endpoint is None:
                kwargs["region_name"] = self._fs.region
            self._client = boto3.session.Session().client("s3", **kwargs)
        return self._client

    def write_no_clobber(self, path: str, data: bytes) -> bool:
        """One ``PutObject`` with ``If-None-Match: *``: False on 412 (the key exists).

        Raises:
            AtomicCreateUnsupported: the store rejects the header (501 Not Implemented).
            OSError: any other failure, naming ``path``.
        """
        bucket, _, key = self.to_fs_path(path).partition("/")
        for _ in range(_CONFLICT_ATTEMPTS):
            try:
                self._s3().put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
                return True
            except ClientError as err:
                status = err.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
                code = err.response.get("Error", {}).get("Code", "")
                if status == 412 or code == "PreconditionFailed":
                    return False
                if status == 409 and code == "ConditionalRequestConflict":
                    continue
                if status == 501 or code == "NotImplemented":
                    raise AtomicCreateUnsupported(
                        f"Cannot publish {path}: the S3 endpoint does not support conditional "
                        "create (If-None-Match: *), so concurrent commits could overwrite "
                        "each other"
                    ) from None
                raise OSError(f"Failed to create {path}: {code or status}: {err}") from err
            except BotoCoreError as err:
                raise OSError(f"Failed to create {path}: {err}") from err
        raise OSError(
            f"Failed to create {path}: S3 kept reporting a concurrent conditional write "
            f"({_CONFLICT_ATTEMPTS} attempts)"
        )
