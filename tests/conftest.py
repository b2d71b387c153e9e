"""Shared fixtures: a scratch warehouse, the Java oracle (Paimon 0.9), Paimon 2 (Java),
pypaimon, one SparkSession, and a local S3 API server (moto) with a bucket to put warehouses
in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
# PAIMON_ORACLE points elsewhere when the checkout is not next to ``shared`` (a git worktree).
ORACLE = Path(
    os.environ.get(
        "PAIMON_ORACLE", ROOT.parent / "shared" / "tools" / "paimon-oracle" / "paimon-oracle"
    )
)


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    path = tmp_path / "warehouse"
    path.mkdir()
    return str(path)


def run_oracle(*args: Any) -> Any:
    """Run one paimon-oracle command (Apache Paimon 0.9, Java) and return its JSON."""
    env = {**os.environ, "ORACLE_PYTHON": sys.executable}
    proc = subprocess.run(
        [str(ORACLE), *map(str, args)], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode:
        raise RuntimeError(f"paimon-oracle {args[0]} failed ({proc.returncode}): {proc.stderr}")
    return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def oracle() -> Callable[..., Any]:
    if not ORACLE.exists():
        pytest.fail(f"paimon-oracle not found at {ORACLE}")
    return run_oracle


@pytest.fixture(scope="session")
def java2_runtime() -> Any:
    """Apache Paimon 2 (Java) ready to run: the jar fetched through Maven, the program compiled
    and its CDS archive dumped on first use (cached, see ``tests/interop/java2.py``)."""
    from tests.interop.java2 import prepare

    return prepare()


@pytest.fixture
def java2(java2_runtime: Any, warehouse: str) -> Any:
    """Apache Paimon 2 (Java) on this test's ``warehouse``: a ``tests.interop.java2.Java2``."""
    from tests.interop.java2 import Java2

    return Java2(java2_runtime, warehouse)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One local[2] SparkSession for the whole test run, configured like the shell."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    wh = tmp_path_factory.mktemp("spark-warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("paimon-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(wh / "spark"))
        .config("spark.sql.catalog.paimon.warehouse", str(wh / "paimon"))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _temp_views(spark: Any) -> set[str]:
    return {v.name for v in spark.catalog.listTables("default") if v.isTemporary}


@pytest.fixture
def new_spark_session(spark: Any) -> Iterator[Callable[[], Any]]:
    """Makes more SparkSessions of the shared SparkContext (``spark.newSession()``): their
    own SQL settings, temporary views and data source registrations. Their temp views are
    dropped after the test; they are never stopped (that would stop the shared context)."""
    made: list[Any] = []

    def make() -> Any:
        made.append(spark.newSession())
        return made[-1]

    yield make
    for other in made:
        for name in _temp_views(other):
            other.catalog.dropTempView(name)


@pytest.fixture(autouse=True)
def _temp_views_stay_in_their_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """Drops the temp views a test registered in the shared SparkSession: a view named like
    a table (``src``) would otherwise shadow the next test's table of that name."""
    if "spark" not in request.fixturenames:
        yield
        return
    spark = request.getfixturevalue("spark")
    before = _temp_views(spark)
    yield
    for name in _temp_views(spark) - before:
        spark.catalog.dropTempView(name)


@dataclass(frozen=True)
class S3Request:
    """One request the S3 server received, as its client addressed and signed it."""

    method: str
    host: str
    path: str
    authorization: str


@dataclass
class S3Server:
    """A running local S3 API: its ``endpoint`` URL and every request it has served."""

    endpoint: str
    requests: list[S3Request] = field(default_factory=list)


@pytest.fixture
def moto_server() -> Iterator[S3Server]:
    """moto's S3 API on 127.0.0.1 and a free port, stopped (its state reset) after the test.

    Single-threaded on purpose: each request, a conditional create included, runs alone as it
    does on S3 (moto's threaded server checks If-None-Match and stores in two steps)."""
    import logging

    from moto.server import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    moto_app = DomainDispatcherApplication(create_backend_app)
    requests: list[S3Request] = []

    def recording_app(environ: dict[str, Any], start_response: Any) -> Any:
        requests.append(
            S3Request(
                environ["REQUEST_METHOD"],
                environ.get("HTTP_HOST", ""),
                environ.get("PATH_INFO", ""),
                environ.get("HTTP_AUTHORIZATION", ""),
            )
        )
        return moto_app(environ, start_response)

    server = make_server("127.0.0.1", 0, recording_app, threaded=False)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.server_port}"
    try:
        yield S3Server(endpoint, requests)
    finally:
        try:
            reset = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
            urllib.request.urlopen(reset).close()
        finally:
            server.shutdown()
            thread.join()
            server.server_close()


@pytest.fixture
def no_aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No AWS_* variable and an empty home (no ~/.aws): S3 settings come from options only."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))


S3_ACCESS_KEY = "paimon-test-access"
S3_SECRET_KEY = "paimon-test-secret"
S3_REGION = "eu-west-3"


@dataclass(frozen=True)
class S3Warehouse:
    """A warehouse URI in a fresh bucket and the catalog options that reach it."""

    uri: str
    bucket: str
    options: dict[str, str]


@pytest.fixture
def s3_warehouse(moto_server: S3Server) -> S3Warehouse:
    """``s3://<new bucket>/wh`` on the ``moto_server``, with Paimon's ``s3.*`` options."""
    import boto3

    bucket = f"paimon-{uuid.uuid4().hex[:12]}"
    options = {
        "s3.endpoint": moto_server.endpoint,
        "s3.access-key": S3_ACCESS_KEY,
        "s3.secret-key": S3_SECRET_KEY,
        "s3.region": S3_REGION,
        "s3.path.style.access": "true",
    }
    client = boto3.session.Session().client(
        "s3",
        endpoint_url=moto_server.endpoint,
        aws_access_key_id=S3_ACCESS_KEY,
        aws_secret_access_key=S3_SECRET_KEY,
        region_name=S3_REGION,
    )
    client.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": S3_REGION})
    return S3Warehouse(f"s3://{bucket}/wh", bucket, options)
