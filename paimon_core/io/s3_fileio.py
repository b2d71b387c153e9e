"""S3 (``s3://``, ``s3a://``, ``s3n://``): pyarrow for all file access, boto3 to publish.

Committers race for ``snapshot-N`` by creating it; only a create that fails when the object
exists lets exactly one of them win. pyarrow's S3 file system cannot send S3's conditional
create (``PutObject`` with ``If-None-Match: *``, honoured by AWS since 2024-08, MinIO and moto),
so ``write_no_clobber`` uses boto3, the AWS SDK for Python: its ``put_object(IfNoneMatch="*")``
(botocore 1.35.2 and later) is the documented client for that header and needs no native
build. Everything else keeps going through pyarrow's ``S3FileSystem``.

Both clients get the same settings, resolved once (``S3Options.from_options``): Paimon's
catalog options ``s3.endpoint``, ``s3.access-key``, ``s3.secret-key``,
``s3.path.style.access`` and ``s3.region`` (or ``s3.endpoint.region``); else the AWS SDKs'
environment variables (``AWS_ENDPOINT_URL_S3``, ``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``, ``AWS_DEFAULT_REGION``);
else the profile of the shared config file (``region``, ``endpoint_url``, its ``services``
section's ``s3`` ``endpoint_url``, ``s3`` ``addressing_style``). boto3 honours
``AWS_ENDPOINT_URL`` on its own and pyarrow does not, so neither is left to find an endpoint
or region by itself: they would disagree, and reads would go to one store and commits to
another. Credentials found nowhere there are left to each client's default chain (the
shared credentials file, SSO, container and instance roles: sources that refresh, which a
copy taken once would let expire); they only sign requests, never pick where they go.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import boto3
import pyarrow.fs as pafs
from botocore.config import Config
from botocore.configloader import load_config
from botocore.exceptions import BotoCoreError, ClientError, ConfigParseError

from paimon_core.exceptions import AtomicCreateUnsupported, InvalidArgument
from paimon_core.io.fileio import S3_SCHEMES, PyArrowFileIO

__all__ = ["S3_SCHEMES", "S3FileIO", "S3Options"]
# Paimon's own names first; the aliases are the other spellings Paimon's S3 plugin mirrors.
_KEYS: dict[str, tuple[str, ...]] = {
    "endpoint": ("s3.endpoint",),
    "access_key": ("s3.access-key", "s3.access.key"),
    "secret_key": ("s3.secret-key", "s3.secret.key"),
    "region": ("s3.region", "s3.endpoint.region"),
    "path_style_access": ("s3.path.style.access", "s3.path-style-access"),
}
# The region both clients sign with for an endpoint when none is configured (both SDKs'
# default).
ENDPOINT_DEFAULT_REGION = "us-east-1"
# S3 answers 409 while another conditional create of the same key is in flight: try again,
# and the loser then gets its 412.
_CONFLICT_ATTEMPTS = 5


def _option(options: Mapping[str, str], name: str) -> str | None:
    for key in _KEYS[name]:
        value = options.get(key)
        if value is not None and str(value).strip():
            return str(value).strip()
    return None


def _env(environ: Mapping[str, str], *names: str) -> str | None:
    """The first of the variables ``names`` set to something other than blanks."""
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return None


@functools.lru_cache(maxsize=16)
def _load_config(path: str, _mtime_ns: int, _size: int) -> dict[str, Any]:
    """The shared config file, parsed as botocore parses it (once per version of the file)."""
    try:
        return load_config(path)
    except ConfigParseError:
        return {}


@dataclass(frozen=True, slots=True)
class _Profile:
    """What the shared config file's profile says about S3."""

    region: str | None = None
    endpoint: str | None = None
    ignore_endpoints: bool = False
    addressing_style: str | None = None


def _profile(environ: Mapping[str, str]) -> _Profile:
    """The profile (``AWS_PROFILE``, else ``AWS_DEFAULT_PROFILE``, else ``default``) of the
    shared config file (``AWS_CONFIG_FILE``, else ``~/.aws/config``); empty without one."""
    home = environ.get("HOME") or os.path.expanduser("~")
    path = os.path.expanduser(
        _env(environ, "AWS_CONFIG_FILE") or os.path.join(home, ".aws", "config")
    )
    try:
        stat = os.stat(path)
    except OSError:
        return _Profile()
    config = _load_config(path, stat.st_mtime_ns, stat.st_size)
    name = _env(environ, "AWS_PROFILE", "AWS_DEFAULT_PROFILE") or "default"
    profile = config.get("profiles", {}).get(name) or {}
    services = config.get("services", {}).get(profile.get("services", ""), {})
    s3_service = services.get("s3") if isinstance(services.get("s3"), dict) else {}
    s3_profile = profile.get("s3") if isinstance(profile.get("s3"), dict) else {}
    return _Profile(
        region=(profile.get("region") or "").strip() or None,
        endpoint=(s3_service.get("endpoint_url") or profile.get("endpoint_url") or "").strip()
        or None,
        ignore_endpoints=str(profile.get("ignore_configured_endpoint_urls", "")).lower() == "true",
        addressing_style=(s3_profile.get("addressing_style") or "").strip().lower() or None,
    )


@dataclass(frozen=True, slots=True)
class S3Options:
    """The S3 settings of one warehouse, for both of its clients (pyarrow and boto3)."""

    endpoint: str | None = None
    access_key: str | None = None
    secret_key: str | None = field(default=None, repr=False)
    region: str | None = None
    path_style_access: bool | None = None
    session_token: str | None = field(default=None, repr=False)

    @classmethod
    def from_options(
        cls, options: Mapping[str, str] | None, environ: Mapping[str, str] | None = None
    ) -> S3Options:
        """Resolve each setting once: the ``s3.*`` keys of catalog ``options`` (other keys
        are ignored), else the AWS environment ``environ`` (``os.environ`` by default), else
        the shared config file's profile.

        The endpoint follows the AWS SDKs' order (``AWS_ENDPOINT_URL_S3``,
        ``AWS_ENDPOINT_URL``, the profile's ``services`` section, its ``endpoint_url``),
        none of them with ``AWS_IGNORE_CONFIGURED_ENDPOINT_URLS`` (or the profile's
        ``ignore_configured_endpoint_urls``) true; the region is ``AWS_REGION``, else
        ``AWS_DEFAULT_REGION``, else the profile's; keys come from the variables only as a
        pair, with ``AWS_SESSION_TOKEN``.

        Raises:
            InvalidArgument: a key without its partner, or a path style that is not a boolean.
        """
        options = options or {}
        environ = os.environ if environ is None else environ
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
        session_token = None
        if access_key is None:
            access_key = _env(environ, "AWS_ACCESS_KEY_ID")
            secret_key = _env(environ, "AWS_SECRET_ACCESS_KEY")
            if (access_key is None) != (secret_key is None):
                given, missing = (
                    ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
                    if access_key
                    else ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID")
                )
                raise InvalidArgument(f"{given} is set but {missing} is not")
            if access_key is not None:
                session_token = _env(environ, "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")
        endpoint = _option(options, "endpoint")
        region = _option(options, "region") or _env(environ, "AWS_REGION", "AWS_DEFAULT_REGION")
        path_style = None if style is None else style.lower() == "true"
        profile = _Profile()
        if endpoint is None or region is None or path_style is None:
            profile = _profile(environ)
        ignore = _env(environ, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
        ignored = profile.ignore_endpoints if ignore is None else ignore.lower() == "true"
        if endpoint is None and not ignored:
            endpoint = _env(environ, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL") or profile.endpoint
        if path_style is None and profile.addressing_style in ("path", "virtual"):
            path_style = profile.addressing_style == "path"
        return cls(
            endpoint=endpoint,
            access_key=access_key,
            secret_key=secret_key,
            region=region or profile.region,
            path_style_access=path_style,
            session_token=session_token,
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
        """The arguments of pyarrow's ``S3FileSystem`` for these settings."""
        kwargs: dict[str, Any] = {"force_virtual_addressing": not self.path_style}
        if self.endpoint is not None:
            kwargs["endpoint_override"] = self.endpoint_url
        if self.access_key is not None:
            kwargs["access_key"] = self.access_key
            kwargs["secret_key"] = self.secret_key
            if self.session_token is not None:
                kwargs["session_token"] = self.session_token
        if self.region is not None:
            kwargs["region"] = self.region
        return kwargs

    def boto3_kwargs(self) -> dict[str, Any]:
        """The arguments of boto3's S3 client for the same settings (no endpoint of its own:
        ``ignore_configured_endpoint_urls``)."""
        kwargs: dict[str, Any] = {
            "config": Config(
                s3={"addressing_style": "path" if self.path_style else "virtual"},
                retries={"mode": "standard"},
                ignore_configured_endpoint_urls=True,
            )
        }
        if self.endpoint is not None:
            kwargs["endpoint_url"] = self.endpoint_url
        if self.access_key is not None:
            kwargs["aws_access_key_id"] = self.access_key
            kwargs["aws_secret_access_key"] = self.secret_key
            if self.session_token is not None:
                kwargs["aws_session_token"] = self.session_token
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
        options = options or S3Options()
        if filesystem is None:
            if options.region is None:
                # An endpoint's default region, else what ``FileSystem.from_uri`` does on
                # AWS: the bucket's own region. Both clients sign with it.
                region = (
                    ENDPOINT_DEFAULT_REGION
                    if options.endpoint is not None
                    else pafs.resolve_s3_region(urlsplit(uri).netloc)
                )
                options = dataclasses.replace(options, region=region)
            filesystem = pafs.S3FileSystem(**options.arrow_kwargs())
        self.s3_options = options
        super().__init__(uri, filesystem)
        self._client: Any = None

    def __getstate__(self) -> dict[str, Any]:
        """Without the boto3 client (not picklable); a worker builds its own on first use."""
        return {**self.__dict__, "_client": None}

    def _s3(self) -> Any:
        if self._client is None:
            kwargs = self.s3_options.boto3_kwargs()
            if "region_name" not in kwargs:  # a file system given, not made here
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
