"""S3 warehouses against a local S3 API (moto): conditional create, racing committers in
separate processes, and Paimon's ``s3.*`` catalog options reaching both S3 clients."""

from __future__ import annotations

import multiprocessing
import pickle
from typing import Any

import boto3
import pyarrow as pa
import pytest
from botocore.stub import Stubber

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import AtomicCreateUnsupported, InvalidArgument
from paimon_core.io.load import get_file_io
from paimon_core.io.s3_fileio import S3FileIO, S3Options
from tests.conftest import S3_ACCESS_KEY, S3_REGION, S3_SECRET_KEY, S3Server, S3Warehouse

SCHEMA = pa.schema([("writer", pa.int64()), ("k", pa.int64())])
WRITERS = 3
COMMITS = 4


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


def _commit_rows(uri: str, options: dict[str, str], writer: int, barrier: Any, lost: Any) -> None:
    """One committer process: ``COMMITS`` appends of its own keys.

    Before the first try to publish each commit it waits for the other committers, so all
    of them race for the same ``snapshot-N`` at the same moment; ``lost`` counts the
    publishes that found their name taken."""
    table = FileSystemCatalog(uri, options=options).get_table("db.t")
    io_class = type(table.file_io)
    publish = io_class.write_no_clobber
    first_try = [False]

    def racing_publish(self: Any, path: str, data: bytes) -> bool:
        if first_try[0] and "/snapshot/snapshot-" in path:
            first_try[0] = False
            barrier.wait()
        published = publish(self, path, data)
        if not published:
            with lost.get_lock():
                lost.value += 1
        return published

    io_class.write_no_clobber = racing_publish  # this child process only
    committer = table.new_commit()
    for commit in range(COMMITS):
        keys = [writer * 1000 + commit * 10 + i for i in range(3)]
        write = table.new_write()
        write.write_arrow(pa.table({"writer": [writer] * 3, "k": keys}, schema=SCHEMA))
        messages = write.prepare_commit()
        first_try[0] = True
        committer.commit(messages)


def test_racing_committer_processes_lose_no_commit(
    s3_warehouse: S3Warehouse, no_aws_env: None
) -> None:
    _create_table(s3_warehouse)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(WRITERS)
    lost = context.Value("i", 0)
    processes = [
        context.Process(
            target=_commit_rows,
            args=(s3_warehouse.uri, s3_warehouse.options, w, barrier, lost),
        )
        for w in range(WRITERS)
    ]
    for p in processes:
        p.start()
    for p in processes:
        p.join()
    assert [p.exitcode for p in processes] == [0] * WRITERS
    # All of them raced for snapshot-1 at least: the others lost it and retried.
    assert lost.value >= WRITERS - 1

    table = _catalog(s3_warehouse).get_table("db.t")
    expected = sorted(
        w * 1000 + c * 10 + i for w in range(WRITERS) for c in range(COMMITS) for i in range(3)
    )
    assert sorted(table.to_arrow().column("k").to_pylist()) == expected
    snapshots = table.snapshot_manager
    ids = snapshots.list_snapshot_ids()
    assert ids == list(range(1, WRITERS * COMMITS + 1))
    users = [snapshots.snapshot(i).commit_user for i in ids]
    assert len(set(users)) == WRITERS and all(users.count(u) == COMMITS for u in set(users))
    latest = table.latest_snapshot()
    assert latest is not None and latest.total_record_count == len(expected)


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


def _assert_served_by(moto_server: S3Server, bucket: str) -> None:
    """Reads, writes and the boto3 publish all reached ``moto_server``, path-style, signed
    with the test's keys and region."""
    served = [r for r in moto_server.requests if r.path.startswith(f"/{bucket}/")]
    host = moto_server.endpoint.removeprefix("http://")
    for request in served:
        assert request.host == host, request
        assert f"Credential={S3_ACCESS_KEY}/" in request.authorization, request
        assert f"/{S3_REGION}/s3/aws4_request" in request.authorization, request
    snapshot_puts = [r for r in served if r.method == "PUT" and "/snapshot/snapshot-1" in r.path]
    assert len(snapshot_puts) == 1  # boto3's conditional create
    assert any(r.method == "GET" and r.path.endswith(".parquet") for r in served)  # pyarrow


@pytest.mark.parametrize(
    ("endpoint_variable", "region_variable"),
    [("AWS_ENDPOINT_URL", "AWS_REGION"), ("AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION")],
)
def test_aws_environment_alone_sends_reads_and_commits_to_its_endpoint(
    moto_server: S3Server,
    s3_warehouse: S3Warehouse,
    no_aws_env: None,
    monkeypatch: pytest.MonkeyPatch,
    endpoint_variable: str,
    region_variable: str,
) -> None:
    """Issue 19.7b: without ``s3.*`` options the AWS SDKs' environment configures pyarrow's
    file system as it does boto3 (reads had gone to AWS, commits to the endpoint)."""
    monkeypatch.setenv(endpoint_variable, moto_server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", S3_ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", S3_SECRET_KEY)
    monkeypatch.setenv(region_variable, S3_REGION)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    catalog = FileSystemCatalog(s3_warehouse.uri)
    catalog.create_database("db")
    catalog.create_table("db.t", SCHEMA)
    table = catalog.get_table("db.t")
    write = table.new_write()
    write.write_arrow(pa.table({"writer": [1, 1], "k": [1, 2]}, schema=SCHEMA))
    table.new_commit().commit(write.prepare_commit())
    fresh = FileSystemCatalog(s3_warehouse.uri).get_table("db.t")
    assert fresh.to_arrow().column("k").to_pylist() == [1, 2]
    _assert_served_by(moto_server, s3_warehouse.bucket)


def test_s3_settings_are_resolved_once_for_both_clients(tmp_path: Any) -> None:
    """Options first, then the AWS environment (the service's endpoint variable before the
    global one), then the shared config file's profile; both clients get the result."""
    config = tmp_path / "config"
    config.write_text(
        "[profile p]\nregion = ap-south-1\nservices = local\ns3 =\n  addressing_style = virtual\n"
        "[services local]\ns3 =\n  endpoint_url = http://profile:1\n"
    )
    env = {
        "AWS_CONFIG_FILE": str(config),
        "AWS_PROFILE": "p",
        "AWS_ENDPOINT_URL": "http://global:1",
        "AWS_ENDPOINT_URL_S3": "http://service:1",
        "AWS_ACCESS_KEY_ID": "env-key",
        "AWS_SECRET_ACCESS_KEY": "env-secret",
        "AWS_SESSION_TOKEN": "env-token",
        "AWS_DEFAULT_REGION": "us-west-2",
    }
    resolved = S3Options.from_options({}, env)
    assert resolved == S3Options(
        "http://service:1", "env-key", "env-secret", "us-west-2", False, "env-token"
    )
    arrow, boto = resolved.arrow_kwargs(), resolved.boto3_kwargs()
    assert arrow["endpoint_override"] == boto["endpoint_url"] == "http://service:1"
    assert (arrow["access_key"], arrow["secret_key"], arrow["session_token"]) == (
        boto["aws_access_key_id"],
        boto["aws_secret_access_key"],
        boto["aws_session_token"],
    )
    assert arrow["region"] == boto["region_name"] == "us-west-2"
    assert arrow["force_virtual_addressing"] is True  # the profile's addressing style
    assert boto["config"].s3["addressing_style"] == "virtual"
    # boto3 must not look for an endpoint of its own.
    assert boto["config"].ignore_configured_endpoint_urls is True
    assert S3Options.from_options({}, {"AWS_ENDPOINT_URL": "http://h:1"}).path_style is True

    assert S3Options.from_options({}, {**env, "AWS_REGION": "eu-north-1"}).region == "eu-north-1"
    given = S3Options.from_options(
        {"s3.endpoint": "http://option:1", "s3.access-key": "a", "s3.secret-key": "s",
         "s3.region": "r", "s3.path.style.access": "false"},
        env,
    )  # fmt: skip
    assert given == S3Options("http://option:1", "a", "s", "r", False)

    del env["AWS_ENDPOINT_URL_S3"]
    assert S3Options.from_options({}, env).endpoint == "http://global:1"
    profile_only = {"AWS_CONFIG_FILE": str(config), "AWS_PROFILE": "p"}
    from_profile = S3Options.from_options({}, profile_only)
    assert from_profile == S3Options("http://profile:1", None, None, "ap-south-1", False)
    assert from_profile.arrow_kwargs()["force_virtual_addressing"] is True
    ignoring = {**env, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"}
    assert S3Options.from_options({}, ignoring).endpoint is None
    assert S3Options.from_options({}, {}) == S3Options()
    with pytest.raises(InvalidArgument, match="AWS_ACCESS_KEY_ID is set but"):
        S3Options.from_options({}, {"AWS_ACCESS_KEY_ID": "k"})


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


def _stubbed_io(*errors: tuple[int, str]) -> tuple[S3FileIO, Stubber]:
    """An ``S3FileIO`` whose publishes first meet ``errors`` (status, code), then succeed."""
    options = S3Options("http://127.0.0.1:9", "k", "s", "us-east-1", True)
    io = S3FileIO("s3://bucket/wh", options)
    client = boto3.session.Session().client("s3", **options.boto3_kwargs())
    stubber = Stubber(client)
    for status, code in errors:
        stubber.add_client_error("put_object", code, http_status_code=status)
    stubber.add_response("put_object", {})
    stubber.activate()
    io._client = client
    return io, stubber


def test_concurrent_conditional_write_is_retried() -> None:
    io, stubber = _stubbed_io((409, "ConditionalRequestConflict"))
    assert io.write_no_clobber("s3://bucket/wh/t/snapshot/snapshot-1", b"x") is True
    stubber.assert_no_pending_responses()


def test_endpoint_without_conditional_create_is_refused() -> None:
    io, _ = _stubbed_io((501, "NotImplemented"))
    with pytest.raises(AtomicCreateUnsupported) as info:
        io.write_no_clobber("s3://bucket/wh/t/snapshot/snapshot-1", b"x")
    message = str(info.value)
    assert "\n" not in message
    assert "s3://bucket/wh/t/snapshot/snapshot-1" in message and "If-None-Match" in message


def test_other_put_failures_name_the_file() -> None:
    io, _ = _stubbed_io((403, "AccessDenied"))
    with pytest.raises(OSError, match=r"Failed to create s3://bucket/wh/x: AccessDenied"):
        io.write_no_clobber("s3://bucket/wh/x", b"x")


def test_rename_table_copies_every_file_on_s3(s3_warehouse: S3Warehouse, no_aws_env: None) -> None:
    _create_table(s3_warehouse)
    catalog = _catalog(s3_warehouse)
    catalog.get_table("db.t").write_arrow(pa.table({"writer": [1], "k": [7]}, schema=SCHEMA))
    catalog.rename_table("db.t", "db.moved")
    assert catalog.list_tables("db") == ["moved"]
    assert not catalog.file_io.exists(f"{s3_warehouse.uri}/db.db/t/schema/schema-0")
    assert catalog.get_table("db.moved").to_arrow().column("k").to_pylist() == [7]
