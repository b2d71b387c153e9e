"""S3 warehouses against a local S3 API (moto): Paimon's ``s3.*`` catalog options reaching
both S3 clients."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument
from paimon_core.fileio import get_file_io
from paimon_core.s3_fileio import S3FileIO, S3Options
from tests.conftest import S3_ACCESS_KEY, S3_REGION, S3Server, S3Warehouse

SCHEMA = pa.schema([("writer", pa.int64()), ("k", pa.int64())])


def _catalog(s3: S3Warehouse) -> FileSystemCatalog:
    return FileSystemCatalog(s3.uri, options=s3.options)


def _create_table(s3: S3Warehouse) -> None:
    catalog = _catalog(s3)
    catalog.create_database("db")
    catalog.create_table("db.t", SCHEMA)


def test_write_no_clobber_creates_once(s3_warehouse: S3Warehouse, no_aws_env: None) -> None:
    io = get_file_io(s3_warehouse.uri, s3_warehouse.options)
    assert isinstance(io, S3FileIO)
    path = f"{s3_warehouse.uri}/db.db/t/snapshot/snapshot-1"
    assert io.write_no_clobber(path, b"first") is True
    assert io.write_no_clobber(path, b"second") is False
    assert io.read_bytes(path) == b"first"
    assert io.list_names(f"{s3_warehouse.uri}/db.db/t/snapshot") == ["snapshot-1"]


def test_s3_options_reach_both_clients_without_aws_environment(
    moto_server: S3Server, s3_warehouse: S3Warehouse, no_aws_env: None
) -> None:
    _create_table(s3_warehouse)
    table = _catalog(s3_warehouse).get_table("db.t")
    write = table.new_write()
    write.write_arrow(pa.table({"writer": [1, 1], "k": [1, 2]}, schema=SCHEMA))
    table.new_commit().commit(write.prepare_commit())
    assert _catalog(s3_warehouse).get_table("db.t").to_arrow().column("k").to_pylist() == [1, 2]

    served = [r for r in moto_server.requests if r.path.startswith(f"/{s3_warehouse.bucket}/")]
    assert {"GET", "PUT"} <= {r.method for r in served}
    host = moto_server.endpoint.removeprefix("http://")
    for request in served:
        # Endpoint and path style: the bucket is in the path, not in the host name.
        assert request.host == host, request
        # Keys and region: every request is signed with them (SigV4 credential scope).
        assert f"Credential={S3_ACCESS_KEY}/" in request.authorization, request
        assert f"/{S3_REGION}/s3/aws4_request" in request.authorization, request
    # Both clients were used: pyarrow for data and metadata files, boto3 to publish.
    snapshot_puts = [r for r in served if r.method == "PUT" and "/snapshot/snapshot-1" in r.path]
    assert len(snapshot_puts) == 1
    assert any(r.path.endswith(".parquet") for r in served)


def test_s3_file_io_pickles_without_its_client(s3_warehouse: S3Warehouse, no_aws_env: None) -> None:
    io = get_file_io(s3_warehouse.uri, s3_warehouse.options)
    assert isinstance(io, S3FileIO)
    path = f"{s3_warehouse.uri}/x/snapshot-1"
    assert io.write_no_clobber(path, b"1") is True  # builds the boto3 client
    copy = pickle.loads(pickle.dumps(io))
    assert copy.s3_options == io.s3_options
    assert copy.write_no_clobber(path, b"2") is False
    assert copy.write_no_clobber(f"{s3_warehouse.uri}/x/snapshot-2", b"2") is True


def test_s3_options_parsing() -> None:
    options = S3Options.from_options(
        {
            "s3.endpoint": "minio:9000",
            "s3.access.key": "a",
            "s3.secret-key": "s",
            "s3.endpoint.region": "r",
            "s3.path.style.access": "FALSE",
            "bucket": "ignored",
        }
    )
    assert options == S3Options("minio:9000", "a", "s", "r", False)
    assert options.endpoint_url == "https://minio:9000"
    assert "secret_key" not in repr(options)
    assert options.arrow_kwargs()["force_virtual_addressing"] is True
    assert S3Options.from_options({"s3.endpoint": "http://h:1"}).path_style is True
    assert S3Options.from_options({}).path_style is False
    with pytest.raises(InvalidArgument, match=r"s3\.path\.style\.access='yes'"):
        S3Options.from_options({"s3.path.style.access": "yes"})
    with pytest.raises(InvalidArgument, match=r"s3\.access-key is set but s3\.secret-key"):
        S3Options.from_options({"s3.access-key": "a"})
