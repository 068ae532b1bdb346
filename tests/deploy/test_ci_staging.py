"""scripts/ci_staging.sh, CI's staging stage, with `docker` and `make` replaced by recorders: it
always ends with `make staging-down` (after a failure, and when it is stopped by a signal), keeps
the failure's status, runs on free host ports of its own as a project of its own, and fails with
the reason when no Docker engine starts."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ci_staging.sh"
# `make TARGET`: recorded with the environment the stage gives it; FAIL_TARGET fails, HANG_TARGET waits
MAKE = """#!/bin/sh
echo "$1 $COMPOSE_PROJECT_NAME $HYBRIDGW_PORT $PROMETHEUS_PORT $STAGING_BIND_ADDRESS" >>"$LOG"
[ "$1" = "$HANG_TARGET" ] && { touch "$LOG.hanging"; sleep 60; }
[ "$1" = "$FAIL_TARGET" ] && exit 3
exit 0
"""
# `docker info` answers unless DOCKER_DOWN; `docker ps` lists nothing
DOCKER = """#!/bin/sh
[ "$1" = info ] && [ -n "$DOCKER_DOWN" ] && exit 1
exit 0
"""


def _stage(tmp_path: Path, **env: str) -> subprocess.Popen:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, text in {"make": MAKE, "docker": DOCKER, "dockerd": "#!/bin/sh\nexit 0\n"}.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    (bin_dir / "debootstrap").symlink_to(bin_dir / "dockerd")
    (bin_dir / "dockerd").write_text("#!/bin/sh\necho dockerd: no engine here\nexit 1\n")
    environment = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LOG": str(tmp_path / "make.log"),
        "DOCKERD_LOG": str(tmp_path / "dockerd.log"),
        **env,
    }
    return subprocess.Popen(
        ["bash", str(SCRIPT)], env=environment, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def _targets(tmp_path: Path) -> list[list[str]]:
    return [line.split() for line in (tmp_path / "make.log").read_text().splitlines()]


def test_a_failed_staging_test_is_brought_down_and_fails_the_stage(tmp_path):
    stage = _stage(tmp_path, FAIL_TARGET="staging-test")
    assert stage.wait(timeout=60) == 3, stage.stderr.read()
    calls = _targets(tmp_path)
    assert [call[0] for call in calls] == ["staging", "staging-test", "staging-down"]
    for _, project, port, prometheus_port, bind in calls:
        assert project == "hybridgw-ci" and bind == "127.0.0.1"
        assert port != prometheus_port and not {port, prometheus_port} & {"8080", "9090", "6379", "5432"}
    assert len({tuple(call[1:]) for call in calls}) == 1  # the same ports throughout


def test_a_passed_stage_is_brought_down_and_passes(tmp_path):
    stage = _stage(tmp_path)
    assert stage.wait(timeout=60) == 0, stage.stderr.read()
    assert [call[0] for call in _targets(tmp_path)] == ["staging", "staging-test", "staging-down"]
    assert "staging stage passed" in stage.stderr.read()


@pytest.mark.parametrize(("signal_number", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stage_stopped_midway_is_brought_down(tmp_path, signal_number, status):
    stage = _stage(tmp_path, HANG_TARGET="staging")
    deadline = time.monotonic() + 30
    while not (tmp_path / "make.log.hanging").exists():
        assert time.monotonic() < deadline and stage.poll() is None, stage.stderr.read()
        time.sleep(0.05)
    os.killpg(stage.pid, signal_number)  # as CI's runner stops a job: its whole process group
    assert stage.wait(timeout=30) == status
    assert [call[0] for call in _targets(tmp_path)] == ["staging", "staging-down"]


def test_no_docker_engine_fails_the_stage_with_the_reason(tmp_path):
    stage = _stage(tmp_path, DOCKER_DOWN="1", DOCKERD_WAIT_S="1")
    assert stage.wait(timeout=60) == 1
    stderr = stage.stderr.read()
    assert "dockerd did not answer within 1 s" in stderr and "dockerd: no engine here" in stderr
    assert not (tmp_path / "make.log").exists()  # nothing was brought up, nothing to bring down
