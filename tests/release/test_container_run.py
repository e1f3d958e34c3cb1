"""`kit release container`: what is asked of the engine (offline, mirror read-only, non-data image).

No engine here: a stand-in records the ``containers.run`` call the Docker SDK would make.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kit.core.errors import ConfigError
from kit.release import container


class FakeBox:
    def __init__(self, code: int, logs: bytes) -> None:
        self.code, self._logs, self.removed = code, logs, False

    def wait(self) -> dict[str, int]:
        return {"StatusCode": self.code}

    def logs(self) -> bytes:
        return self._logs

    def remove(self, force: bool = False) -> None:
        self.removed = force


class FakeEngine:
    def __init__(self, code: int = 0) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.box = FakeBox(code, b"make reproduce: done\n")
        self.containers = self

    def run(self, image: str, **kwargs: Any) -> FakeBox:
        self.calls.append((image, kwargs))
        return self.box


def test_spec_is_offline_with_the_mirror_read_only(tmp_path: Path) -> None:
    spec = container.run_spec("cpu", tmp_path)
    assert spec.image == "localhost/litaudit-kit:cpu"
    assert spec.command == ["reproduce"] and spec.entrypoint is None
    assert spec.network_mode == "none"
    assert spec.volumes == {str(tmp_path.resolve()): {"bind": "/mirror", "mode": "ro"}}
    assert not spec.gpu


def test_out_folder_receives_the_tables_without_mounting_on_them(tmp_path: Path) -> None:
    spec = container.run_spec("gpu", tmp_path / "m", target="verify", out=tmp_path / "o")
    assert spec.gpu
    assert spec.volumes[str((tmp_path / "o").resolve())] == {"bind": "/out", "mode": "rw"}
    assert spec.entrypoint == ["bash", "-c"]
    assert spec.command == ["make verify && cp -r data/tables/. /out/"]


def test_unknown_kind_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cpu, gpu"):
        container.run_spec("tpu", tmp_path)


@pytest.mark.parametrize("code", [0, 2])
def test_run_passes_the_spec_and_returns_exit_code_and_logs(tmp_path: Path, code: int) -> None:
    engine = FakeEngine(code)
    res = container.run(container.run_spec("cpu", tmp_path), engine)
    assert res == container.RunResult(code, "make reproduce: done\n")
    (image, kwargs) = engine.calls[0]
    assert image == "localhost/litaudit-kit:cpu"
    assert kwargs["network_mode"] == "none" and kwargs["detach"] is True
    assert kwargs["volumes"][str(tmp_path.resolve())]["mode"] == "ro"
    assert "entrypoint" not in kwargs and "device_requests" not in kwargs
    assert len(kwargs["ulimits"]) == 2
    assert engine.box.removed


def test_gpu_run_requests_every_gpu(tmp_path: Path) -> None:
    engine = FakeEngine()
    container.run(container.run_spec("gpu", tmp_path), engine)
    (req,) = engine.calls[0][1]["device_requests"]
    caps = req["Capabilities"] if isinstance(req, dict) else req.capabilities
    assert caps == [["gpu"]]


def test_no_engine_is_a_config_error(tmp_path: Path) -> None:
    pytest.importorskip("docker")
    with pytest.raises(ConfigError, match="no Docker API"):
        container.client(f"unix://{tmp_path}/absent.sock")
