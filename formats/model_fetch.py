"""`hybridgw model pull FILE|URL`: any GGUF file into the model directory, verified.

A local file is copied; an http(s) URL is downloaded into `<name>.partial` and a later pull
resumes it with a Range request (a server that answers 200 instead starts it over). The sha256
is checked when given, the result must open as a GGUF file, and only then does the file take its
final name: a failed or interrupted pull never leaves a file that looks complete.
"""

import hashlib
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from formats.errors import FormatError
from formats.gguf_reader import GGUFReader
from formats.model_pull import CHUNK_BYTES, PullError, models_dir
from formats.progress import byte_progress

TIMEOUT_S = 60


def is_url(source: str) -> bool:
    return urllib.parse.urlsplit(source).scheme in ("http", "https")


def target_name(source: str) -> str:
    """The file name a source is stored under (the last part of its path)."""
    name = Path(urllib.parse.unquote(urllib.parse.urlsplit(source).path) if is_url(source) else source).name
    if not name.endswith(".gguf") or name in (".gguf", ""):
        raise PullError(f"{source}: not a .gguf file name")
    return name


def fetch(
    source: str, directory: Path | None = None, sha256: str | None = None, progress: bool = True
) -> Path:
    """Put the verified GGUF file `source` (a path or an http(s) URL) in the model directory."""
    target = (directory or models_dir()) / target_name(source)
    expected = sha256.lower() if sha256 else None
    if target.exists() and (expected is None or _sha256(target) == expected):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    if is_url(source):
        _download(source, partial, progress)
    else:
        _copy(Path(source), partial, progress)
    _verify(partial, expected, source)
    os.replace(partial, target)
    return target


def _copy(source: Path, partial: Path, progress: bool) -> None:
    if not source.is_file():
        raise PullError(f"{source}: no such file")
    bar = byte_progress(source.stat().st_size, f"copying {source.name}", progress)
    with open(source, "rb") as reader, open(partial, "wb") as writer, bar:
        while chunk := reader.read(CHUNK_BYTES):
            writer.write(chunk)
            bar.update(len(chunk))


def _download(url: str, partial: Path, progress: bool) -> None:
    """Into `partial`, resuming what an earlier pull left there."""
    have = partial.stat().st_size if partial.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            resumed = have > 0 and response.status == 206
            total = int(response.headers.get("Content-Length", 0)) + (have if resumed else 0)
            bar = byte_progress(total, f"downloading {partial.name.removesuffix('.partial')}", progress)
            with open(partial, "ab" if resumed else "wb") as writer, bar:
                bar.update(have if resumed else 0)
                while chunk := response.read(CHUNK_BYTES):
                    writer.write(chunk)
                    bar.update(len(chunk))
    except urllib.error.HTTPError as error:
        if error.code == 416 and have:  # the partial file is already whole
            return
        raise PullError(f"{url}: HTTP {error.code} {error.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise PullError(f"{url}: download failed ({error}); run the pull again to resume") from None


def _verify(partial: Path, expected: str | None, source: str) -> None:
    if expected is not None and (actual := _sha256(partial)) != expected:
        partial.unlink(missing_ok=True)
        raise PullError(f"{source}: sha256 {actual} does not match {expected}")
    try:
        GGUFReader(partial)
    except FormatError as error:
        partial.unlink(missing_ok=True)
        raise PullError(f"{source}: not a usable GGUF file ({error})") from None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def list_models(directory: Path | None = None) -> list[dict]:
    """Every GGUF file in the model directory: name, bytes, architecture and file type."""
    rows = []
    for path in sorted((directory or models_dir()).glob("*.gguf")):
        try:
            reader = GGUFReader(path)
            architecture, file_type = reader.get("general.architecture"), reader.get("general.file_type")
        except FormatError as error:
            architecture, file_type = f"unreadable: {error}", None
        rows.append(
            {
                "name": path.stem,
                "path": str(path),
                "bytes": path.stat().st_size,
                "architecture": architecture,
                "file_type": file_type,
            }
        )
    return rows
