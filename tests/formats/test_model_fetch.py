"""`hybridgw model pull FILE|URL` and `model list`: verified copies and resumable downloads."""

import hashlib
import http.server
import json
import threading

import pytest

from formats.ggml_types import GGMLType
from formats.gguf_reader import GGUFReader
from formats.model_fetch import fetch, target_name
from formats.model_pull import PullError
from tests.hybridgw.test_cli import run_cli


class FileServer:
    """A real HTTP server on port 0 serving one file, with or without Range support; it
    records the Range header of every request."""

    def __init__(self, payload: bytes, honour_range: bool = True):
        self.payload, self.ranges = payload, []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if not self.path.endswith("/tiny.gguf"):
                    self.send_error(404)
                    return
                wanted = self.headers.get("Range")
                server.ranges.append(wanted)
                start = int(wanted.removeprefix("bytes=").rstrip("-")) if wanted and honour_range else 0
                body = server.payload[start:]
                self.send_response(206 if start else 200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def model_file(tiny_model):
    return tiny_model(GGMLType.Q8_0)


def test_a_local_file_is_copied_verified_and_kept(model_file, tmp_path):
    digest = hashlib.sha256(model_file.read_bytes()).hexdigest()
    stored = fetch(str(model_file), tmp_path / "models", sha256=digest, progress=False)
    assert stored == tmp_path / "models" / model_file.name
    assert stored.read_bytes() == model_file.read_bytes()
    before = stored.stat().st_mtime_ns
    assert fetch(str(model_file), tmp_path / "models", progress=False) == stored  # a second pull does nothing
    assert stored.stat().st_mtime_ns == before


def test_a_wrong_sha256_or_a_broken_file_leaves_nothing(model_file, tmp_path):
    models = tmp_path / "models"
    with pytest.raises(PullError, match="does not match"):
        fetch(str(model_file), models, sha256="0" * 64, progress=False)
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\xff" * 60)
    with pytest.raises(PullError, match="not a usable GGUF file"):
        fetch(str(broken), models, progress=False)
    assert list(models.iterdir()) == []
    with pytest.raises(PullError, match=r"not a \.gguf file name"):
        target_name("https://example.org/model.bin")


@pytest.mark.parametrize("honour_range", [True, False])
def test_an_interrupted_download_resumes(model_file, tmp_path, honour_range):
    payload = model_file.read_bytes()
    server = FileServer(payload, honour_range)
    models = tmp_path / "models"
    models.mkdir()
    (models / "tiny.gguf.partial").write_bytes(payload[:1000])  # what an interrupted pull left
    try:
        stored = fetch(f"{server.url}/files/tiny.gguf", models, progress=False)
        with pytest.raises(PullError, match="HTTP 404"):
            fetch(f"{server.url}/files/missing.gguf", models, progress=False)
    finally:
        server.close()
    assert stored.read_bytes() == payload
    assert server.ranges[0] == "bytes=1000-"  # asked for the rest; a server without ranges sent all
    assert not (models / "tiny.gguf.partial").exists()


def test_model_list_and_pull_on_the_command_line(capsys, model_file, tmp_path):
    models = tmp_path / "models"
    code, out, _ = run_cli(capsys, "model", "pull", str(model_file), "--dir", str(models), "--quiet")
    assert code == 0 and out.strip() == str(models / model_file.name)
    code, out, _ = run_cli(capsys, "model", "list", "--dir", str(models), "--json")
    assert code == 0
    assert json.loads(out) == [
        {
            "name": model_file.stem,
            "path": str(models / model_file.name),
            "bytes": model_file.stat().st_size,
            "architecture": "llama",
            "file_type": GGUFReader(model_file).get("general.file_type"),
        }
    ]
    code, _, err = run_cli(capsys, "model", "pull", str(tmp_path / "absent.gguf"), "--dir", str(models))
    assert code == 1 and "no such file" in err
