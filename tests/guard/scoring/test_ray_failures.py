"""`--engine ray` fails fast and says why (issue 41; docs/scale.md "When Ray fails").

Fast: the pure parts (address parsing, the TCP probe, the classification of Ray's refusals,
the checkpoints), and an unreachable address through the CLI (no Ray process is started).
Slow: a real `ray start --head` cluster in its own process group, HOME and TMPDIR (so neither
this machine's ~/.ray/auth_token nor another Ray on it takes part): token authentication
explained, and a cluster killed mid-run (exit 2, the finished checkpoints kept in the store,
the rerun byte-identical to an uninterrupted run).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.core.errors import ConfigError
from kit.core.parallel import (
    Engine,
    connect_failure,
    parse_address,
    recorded_cluster,
    tcp_probe,
    wants_ray,
)
from kit.guard.scoring import score_store as ss

RAY_BIN = Path(sys.executable).parent / "ray"
CHECKPOINT = 50  # pairs per store checkpoint in the runs below (the default is 4096)
# the `kit` console script with a small checkpoint: test code (production never imports it)
DRIVER = (
    "import sys; import kit.guard.scoring.score_store as ss; ss.CHECKPOINT_PAIRS = int(sys.argv[1]); "
    "sys.argv = ['kit', *sys.argv[2:]]; from kit.cli import main; main()"
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pairs(path: Path, n: int = 300, seed: int = 0) -> Path:
    """SYNTHETIC claims and passages of varied lengths (one to several windows)."""
    rng = np.random.default_rng(seed)
    words = "aspirin lowers fever in adults statins cut ldl trials show no effect on".split()
    claims = [" ".join(rng.choice(words, rng.integers(3, 12))) for _ in range(n)]
    passages = [" ".join(rng.choice(words, rng.integers(4, 500))) for _ in range(n)]
    frame = pd.DataFrame({"pair_id": [f"p{i}" for i in range(n)], "claim": claims})
    frame["passage"] = passages
    frame.to_parquet(path, index=False)
    return path


# ----------------------------------------------------------------------------- fast


def test_parse_address_forms() -> None:
    assert parse_address("10.0.0.5:6379") == parse_address(" 10.0.0.5:6379 ")
    a = parse_address("head.lab:6380")
    assert (a.kind, a.host, a.port, a.probed) == ("gcs", "head.lab", 6380, True)
    c = parse_address("ray://head.lab")
    assert (c.kind, c.host, c.port) == ("client", "head.lab", 10001)
    assert parse_address("ray://head.lab:20001/").port == 20001
    assert parse_address("[::1]:6379").host == "::1"
    for word in ("auto", "local"):
        assert parse_address(word).kind == word and not parse_address(word).probed
    for bad in ("head", "head:", "head:port", "head:0", "head:70000", ":6379", "ray://"):
        with pytest.raises(ConfigError, match="is not a Ray address"):
            parse_address(bad)


def test_tcp_probe_of_a_closed_port_answers_within_the_timeout() -> None:
    port = _closed_port()
    t0 = time.monotonic()
    why = tcp_probe("127.0.0.1", port, 2.0)
    assert time.monotonic() - t0 < 2.0
    assert why is not None and "nothing is listening" in why and str(port) in why
    with socket.socket() as s:  # a listening port answers
        s.bind(("127.0.0.1", 0))
        s.listen()
        assert tcp_probe("127.0.0.1", s.getsockname()[1], 2.0) is None


def test_connect_failure_names_the_reason_and_the_fix() -> None:
    auth = connect_failure(
        "h:6379",
        "ConnectionError: Failed to connect\nRuntimeError: RPC error: InvalidAuthToken: "
        "Authentication token is missing or incorrect",
        20,
    )
    text = auth.render()
    assert auth.reason == "ray_unreachable" and "h:6379" in text
    assert "token authentication" in text and "RAY_AUTH_MODE=token" in text
    assert "~/.ray/auth_token" in text and "InvalidAuthToken" in text
    version = connect_failure("h:6379", "RuntimeError: Version mismatch: cluster 2.9", 20)
    assert "another Ray or Python version" in version.render()
    other = connect_failure("h:6379", "RpcError: Received http2 header with status: 404", 20)
    assert "not as a Ray cluster" in other.render()


def test_engine_checks_the_connect_timeout() -> None:
    assert Engine("ray").timeout == 20.0 and Engine("ray", connect_timeout=3).timeout == 3.0
    with pytest.raises(ConfigError, match="need --engine ray"):
        Engine("local", connect_timeout=5)
    with pytest.raises(ConfigError, match="must be > 0"):
        Engine("ray", connect_timeout=0)


def test_checkpoints_are_cut_from_the_front() -> None:
    cuts = ss.checkpoint_slices(10, 4)
    assert [(s.start, s.stop) for s in cuts] == [(0, 4), (4, 8), (8, 10)]
    # a resumed run (a prefix of checkpoints done) cuts the rest as the first run did
    items = list(range(10))
    assert [items[4:][s] for s in ss.checkpoint_slices(6, 4)] == [items[s] for s in cuts[1:]]
    assert ss.checkpoint_slices(0, 4) == []


def test_unreachable_address_is_exit_2_within_the_timeout(
    tmp_path: Path, tiny_cross_dir: Path
) -> None:
    pytest.importorskip("ray", reason="ray not installed: pip install -e '.[ray]'")
    port = _closed_port()
    src = _pairs(tmp_path / "pairs.parquet", n=4)
    args = ["guard", "score", str(src), "--verifier", str(tiny_cross_dir), "--engine", "ray"]
    args += ["--ray-address", f"127.0.0.1:{port}"]  # the default timeout, 20 s
    t0 = time.monotonic()
    r = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "o.csv"), "--no-cache"])
    took = time.monotonic() - t0
    assert r.exit_code == 2, r.output
    assert f"127.0.0.1:{port}" in r.output and "connection refused" in r.output
    assert "--ray-connect-timeout 20 s" in r.output and "Traceback" not in r.output
    assert took < 20.0, took  # the whole command; the probe itself is refused at once
    assert not (tmp_path / "o.csv").exists()


def test_a_stale_recorded_cluster_is_named(
    tmp_path: Path, tiny_cross_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --ray-address: Ray would join what `ray start` recorded; a dead one is said so."""
    pytest.importorskip("ray", reason="ray not installed: pip install -e '.[ray]'")
    port = _closed_port()
    tmp = Path(tempfile.mkdtemp(prefix="kr", dir="/tmp"))
    try:
        (tmp / "ray").mkdir()
        (tmp / "ray" / "ray_current_cluster").write_text(f"127.0.0.1:{port}")
        monkeypatch.setenv("TMPDIR", str(tmp))
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
        assert recorded_cluster() == (f"127.0.0.1:{port}", tmp / "ray" / "ray_current_cluster")
        src = _pairs(tmp_path / "pairs.parquet", n=4)
        args = ["guard", "score", str(src), "--verifier", str(tiny_cross_dir), "--no-cache"]
        r = CliRunner().invoke(cli, [*args, "--engine", "ray", "--out", str(tmp_path / "o.csv")])
        assert r.exit_code == 2, r.output
        assert "recorded by `ray start`" in r.output and "--ray-address local" in r.output
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ----------------------------------------------------------------------------- slow: a cluster


@dataclass
class Head:
    """A `ray start --head --block` in its own process group, HOME and TMPDIR."""

    address: str
    env: dict[str, str]
    proc: subprocess.Popen

    def kill(self) -> None:
        """SIGKILL the cluster's process group (its processes only: none other is touched)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


def _env(home: Path, tmp: Path, auth: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(HOME=str(home), TMPDIR=str(tmp), RAY_USAGE_STATS_ENABLED="0")
    if auth is not None:
        env["RAY_AUTH_MODE"] = auth
    return env


@pytest.fixture
def head_factory(tmp_path: Path) -> Iterator[object]:
    pytest.importorskip("ray", reason="ray not installed: pip install -e '.[ray]'")
    if not RAY_BIN.is_file():
        pytest.skip(f"no ray command at {RAY_BIN}")
    tmp = Path(tempfile.mkdtemp(prefix="kr", dir="/tmp"))  # short: Ray's socket paths
    heads: list[Head] = []

    def start(auth: str) -> Head:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        env = _env(home, tmp, auth)
        if auth == "token":
            subprocess.run(
                [str(RAY_BIN), "get-auth-token", "--generate"], env=env, check=True, stdout=-3
            )
        ports = [_closed_port() for _ in range(3)]
        args = [str(RAY_BIN), "start", "--head", f"--port={ports[0]}", "--num-cpus=2"]
        args += ["--object-store-memory=200000000", "--include-dashboard=false", "--block"]
        args += [f"--dashboard-port={ports[1]}", f"--dashboard-agent-listen-port={ports[2]}"]
        args += ["--disable-usage-stats"]
        log = open(tmp_path / f"head-{len(heads)}.log", "w")  # open for the head's life
        proc = subprocess.Popen(args, env=env, stdout=log, stderr=log, start_new_session=True)
        head = Head(f"127.0.0.1:{ports[0]}", env, proc)
        heads.append(head)
        deadline = time.monotonic() + 120
        while "block forever" not in (tmp_path / f"head-{len(heads) - 1}.log").read_text():
            assert proc.poll() is None and time.monotonic() < deadline, "ray start failed"
            time.sleep(0.5)
        return head

    yield start
    for head in heads:
        head.kill()
    shutil.rmtree(tmp, ignore_errors=True)


def _kit(env: dict[str, str], *args: str) -> subprocess.Popen:
    """`kit ARGS` in its own process group (so a hung run is killed whole: :func:`_said`)."""
    cmd = [sys.executable, "-c", DRIVER, str(CHECKPOINT), *args]
    return subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )


def _said(p: subprocess.Popen, timeout: float) -> str:
    """The run's output once it ended; a run past ``timeout`` seconds is killed and fails."""
    try:
        return p.communicate(timeout=timeout)[0].decode()
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out = p.communicate()[0].decode()
        raise AssertionError(f"kit ran past {timeout} s:\n{out}") from None


def _score_args(src: Path, model: Path, out: Path, store: Path) -> list[str]:
    args = ["guard", "score", str(src), "--verifier", str(model), "--out", str(out)]
    return [*args, "--cache-dir", str(store), "--batch-size", "8"]


@pytest.mark.slow  # ~40 s on 2 shared cores: a cluster's start, then one Ray run on it
def test_token_authentication_is_explained_and_the_fix_works(
    head_factory: object, tmp_path: Path, tiny_cross_dir: Path
) -> None:
    head = head_factory("token")  # type: ignore[operator]
    src = _pairs(tmp_path / "pairs.parquet", n=40)
    ray_args = ["--engine", "ray", "--ray-address", head.address, "--ray-connect-timeout", "10"]
    client = {k: v for k, v in head.env.items() if k != "RAY_AUTH_MODE"}  # as a new user's shell
    t0 = time.monotonic()
    p = _kit(
        client, *_score_args(src, tiny_cross_dir, tmp_path / "a.csv", tmp_path / "s"), *ray_args
    )
    out = _said(p, 120)
    assert p.returncode == 2, out
    assert time.monotonic() - t0 < 60
    assert f"cannot connect to the Ray cluster at {head.address}" in out
    assert "token authentication" in out and "RAY_AUTH_MODE=token" in out
    assert not (tmp_path / "a.csv").exists()
    # the fix the message gives works: the same command with RAY_AUTH_MODE=token
    p = _kit(
        head.env, *_score_args(src, tiny_cross_dir, tmp_path / "b.csv", tmp_path / "s"), *ray_args
    )
    out = _said(p, 300)
    assert p.returncode == 0, out
    local = tmp_path / "local.csv"
    p = _kit(head.env, *_score_args(src, tiny_cross_dir, local, tmp_path / "s-local"))
    out = _said(p, 120)
    assert p.returncode == 0, out
    assert (tmp_path / "b.csv").read_bytes() == local.read_bytes()


@pytest.mark.slow  # ~70 s on 2 shared cores: a cluster's start, a Ray run killed, two local runs
def test_cluster_lost_mid_run_is_exit_2_and_the_rerun_resumes_byte_identical(
    head_factory: object, tmp_path: Path, tiny_cross_dir: Path
) -> None:
    head = head_factory("disabled")  # type: ignore[operator]
    src = _pairs(tmp_path / "pairs.parquet")
    store, out = tmp_path / "store", tmp_path / "ray.csv"
    ray_args = ["--engine", "ray", "--ray-address", head.address, "--ray-connect-timeout", "5"]
    p = _kit(head.env, *_score_args(src, tiny_cross_dir, out, store), *ray_args)
    deadline = time.monotonic() + 240
    while not list(store.glob("*/*/shard-*.parquet")):  # the first checkpoint is stored
        assert p.poll() is None, _said(p, 10)
        assert time.monotonic() < deadline, "no checkpoint was written"
        time.sleep(0.2)
    head.kill()
    t_kill = time.monotonic()
    said = _said(p, 120)
    assert p.returncode == 2, said
    assert time.monotonic() - t_kill < 30  # 5 s of silence and the probe period, then exit 2
    assert f"error [ray_lost]: the Ray cluster {head.address} was lost mid-run" in said
    # which of the two paths reports it depends on what the driver was doing at the kill:
    # the watchdog (GCS silent for the timeout) or the supervisor (Ray ended the driver)
    assert "stopped answering" in said or "Ray ended this run's driver process" in said
    assert "Traceback" not in said and said.count("error [ray_lost]") == 1
    assert "nothing was written" in said and "rerun the same command to resume" in said
    done = int(said.split("done: ")[1].split(" of the 300")[0])
    assert done > 0 and done % CHECKPOINT == 0 and done < 300
    assert not out.exists()
    (folder,) = [f for f in store.glob("*/*") if f.is_dir()]
    assert len(ss.read_partition(folder)) == done  # what the message says the store kept
    # the rerun (local engine) resumes from the store; an uninterrupted run, same bytes
    env = dict(head.env)
    rerun, whole = tmp_path / "rerun.csv", tmp_path / "whole.csv"
    p = _kit(env, *_score_args(src, tiny_cross_dir, rerun, store))
    said = _said(p, 300)
    assert p.returncode == 0 and f"{done} hit(s), {300 - done} scored" in said, said
    p = _kit(env, *_score_args(src, tiny_cross_dir, whole, tmp_path / "s-whole"))
    said = _said(p, 300)
    assert p.returncode == 0 and "0 hit(s), 300 scored" in said, said
    assert rerun.read_bytes() == whole.read_bytes()


def test_wants_ray_reads_the_engine_option() -> None:
    assert wants_ray(["guard", "score", "p.csv", "--engine", "ray"])
    assert wants_ray(["audit", "runs.jsonl", "--engine=ray"])
    assert not wants_ray(["guard", "score", "p.csv", "--engine", "local"])
    assert not wants_ray(["guard", "score", "ray", "--out", "engine"])


def _supervised(body: str) -> subprocess.CompletedProcess:
    code = f"import os, kit.core.parallel as p; p.supervise(); {body}"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_the_supervisor_explains_a_driver_that_ray_ended() -> None:
    """Ray's _Exit(1) skips Python: the parent says what the child last reported, exit 2."""
    r = _supervised("p.report_progress(['done: 5 of 9 pairs', 'nothing was written']); os._exit(1)")
    assert r.returncode == 2, r
    assert "error [ray_lost]" in r.stderr and "Ray ended this run's driver process" in r.stderr
    assert "exit status 1" in r.stderr and "done: 5 of 9 pairs" in r.stderr
    # a command that ended through the kit keeps its own status, whatever happens after
    r = _supervised("p.finished(0); os._exit(1)")
    assert r.returncode == 0 and "error" not in r.stderr, r
    r = _supervised("p.finished(2); raise SystemExit(2)")
    assert r.returncode == 2 and "ray_lost" not in r.stderr, r
