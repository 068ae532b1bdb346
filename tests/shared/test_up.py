"""`hybridgw up`: one command runs gateway, edge node and cloud engine on the demo model."""

import signal
import socket
import subprocess
import sys
import threading
import time

import openai
import pytest
import requests


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.demo_model
def test_up_serves_both_targets_and_stops_cleanly(demo_model_path):
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "shared", "up", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out: list[str] = []
    threading.Thread(target=lambda: out.extend(process.stdout), daemon=True).start()
    threading.Thread(target=lambda: list(process.stderr), daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while True:
        assert process.poll() is None and time.monotonic() < deadline, "hybridgw up did not become ready"
        try:
            if requests.get(f"{url}/health/ready", timeout=1).status_code == 200:
                break
        except requests.ConnectionError:
            pass
        time.sleep(0.5)
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0)
    targets = set()
    for private in (True, False):
        headers = {"X-Hybridgw-Privacy": "private"} if private else {"X-Hybridgw-Latency-Target-Ms": "1"}
        raw = client.chat.completions.with_raw_response.create(
            model="smollm2-135m",
            messages=[{"role": "user", "content": "Say hi"}],
            max_tokens=4,
            extra_headers=headers,
        )
        assert raw.parse().choices[0].message.content
        targets.add(raw.headers["X-Hybridgw-Target"])
    assert "edge" in targets
    assert any("smollm2-135m" in line for line in out) and any("curl" in line for line in out)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 0
