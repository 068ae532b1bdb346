"""Cloud workers on one host: each takes a free gRPC port unless told one, and logs the port it
got; a given port that is taken stops the start with a message naming it."""

import socket
import subprocess
import sys
import threading
import time

import grpc
import pytest

from formats.ggml_types import GGMLType
from shared.proto import inference_pb2 as pb
from shared.proto import inference_pb2_grpc as pb_grpc
from tests.fixtures.process_logs import logged_port

pytestmark = pytest.mark.integration


class Worker:
    """`hybridgw cloud` as an operator starts it, its stderr lines collected."""

    def __init__(self, model, redis_url: str, prefix: str, name: str, extra: tuple[str, ...] = ()):
        command = [sys.executable, "-m", "hybridgw", "cloud", "--model", str(model), "--redis", redis_url]
        command += ["--prefix", prefix, "--name", name, "--num-blocks", "64", "--block-size", "4", *extra]
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(self.process.stderr), daemon=True).start()

    def port(self, deadline: float) -> int:
        while (port := logged_port(self.lines, service="cloud")) is None:
            assert self.process.poll() is None and time.monotonic() < deadline, "".join(self.lines)
            time.sleep(0.05)
        return port

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        return self.process.wait(timeout=60)


def _node_id(port: int) -> str:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        return pb_grpc.InferenceStub(channel).Stats(pb.StatsRequest(), timeout=10).node_id


def test_two_workers_on_one_host_both_start_and_a_taken_port_is_named(tiny_model, redis_url, redis_keys):
    model = tiny_model(GGMLType.F32)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    taken_port = taken.getsockname()[1]
    workers = [Worker(model, redis_url, redis_keys.prefix, name) for name in ("w1", "w2")]
    refused = Worker(model, redis_url, redis_keys.prefix, "w3", ("--grpc-port", str(taken_port)))
    try:
        deadline = time.monotonic() + 120
        ports = [worker.port(deadline) for worker in workers]
        assert ports[0] != ports[1] and taken_port not in ports
        assert [_node_id(port) for port in ports] == ["w1", "w2"]
        assert refused.process.wait(timeout=120) == 1
        expected = (
            f"hybridgw: error: cannot listen on 127.0.0.1:{taken_port} (address in use or not available)"
        )
        deadline = time.monotonic() + 5
        while not any(line.rstrip("\n") == expected for line in refused.lines):
            assert time.monotonic() < deadline, "".join(refused.lines)
            time.sleep(0.02)
        assert not any("Traceback" in line for line in refused.lines)
        assert [worker.stop() for worker in workers] == [0, 0]
    finally:
        for worker in (*workers, refused):
            worker.stop()
        taken.close()
