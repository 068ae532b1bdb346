"""Progress while numba compiles kernels (an empty kernel cache: a new machine, a new version, a
new container): which kernel, how many are compiled so far, the time since compiling began, every
`every_s` seconds while one compiles and whenever a top-level one is done, so a first start that
compiles for a minute says so instead of going silent. Fed by numba's "numba:compile" event,
which fires on cache misses only: a warm start reports nothing."""

import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from numba.core import event

# report(kernel, compiled so far, seconds since compiling began, whether that kernel is done)
Report = Callable[[str, int, float, bool], None]


@dataclass(slots=True)
class _State:
    depth: int = 0
    compiled: int = 0
    kernel: str = ""
    began: float | None = None  # the first compile's start
    last_report: float = 0.0


class CompileProgress(event.Listener):
    def __init__(self, report: Report, every_s: float = 5.0, clock: Callable[[], float] = time.monotonic):
        self.report, self.every_s, self.clock = report, every_s, clock
        self.state = _State()
        self._lock = threading.Lock()

    def on_start(self, ev) -> None:
        with self._lock:
            state = self.state
            if state.depth == 0:
                function = ev.data["dispatcher"].py_func
                state.kernel = f"{function.__module__}.{function.__qualname__}"
                if state.began is None:
                    state.began = state.last_report = self.clock()
            state.depth += 1

    def on_end(self, ev) -> None:
        with self._lock:
            state = self.state
            state.depth -= 1
            state.compiled += 1
            if state.depth == 0:
                state.last_report = self.clock()
                self.report(state.kernel, state.compiled, state.last_report - state.began, True)

    def beat(self) -> None:
        """A report of the kernel compiling now, if `every_s` passed since the last one."""
        with self._lock:
            state, now = self.state, self.clock()
            if state.depth and now - state.last_report >= self.every_s:
                state.last_report = now
                self.report(state.kernel, state.compiled, now - state.began, False)


def report_compile_progress(report: Report, every_s: float = 5.0) -> CompileProgress:
    """Reports for the rest of the process (a daemon thread beats while a kernel compiles)."""
    progress = CompileProgress(report, every_s)
    event.register("numba:compile", progress)

    def beating() -> None:
        while True:
            time.sleep(min(1.0, every_s))
            progress.beat()

    threading.Thread(target=beating, name="compile-progress", daemon=True).start()
    return progress


def human_line(kernel: str, compiled: int, elapsed_s: float, done: bool) -> str:
    """One line for a terminal."""
    what = "compiled" if done else "compiling"
    return (
        f"first start: compiling kernels (cached afterwards): {compiled} compiled, {elapsed_s:.0f} s; "
        f"{what} {kernel.rsplit('.', 1)[-1]}"
    )


def log_compiling(logger_name: str) -> Report:
    """A service's structured progress line while its kernels compile (`hybridgw up` shows it)."""
    logger = logging.getLogger(logger_name)

    def report(kernel: str, compiled: int, elapsed_s: float, done: bool) -> None:
        line = {"event": "compiling", "kernel": kernel, "compiled": compiled}
        logger.info(json.dumps({**line, "elapsed_s": round(elapsed_s, 1), "done": done}))

    return report


def compile_bar(description: str, file=None) -> tuple:
    """(a progress bar on stderr (tqdm), the listener feeding it): the bar counts the kernels
    this process compiles and names the one compiling now, with the time since the start; its
    postfix can say the stage (`set_postfix_str`). Use the bar as a context manager (closed at
    the end). A warm cache compiles nothing: the bar then stays at 0 and the stages pass."""
    from tqdm import tqdm

    bar = tqdm(desc=description, unit=" kernels", file=file or sys.stderr, dynamic_ncols=True)

    def report(kernel: str, compiled: int, elapsed_s: float, done: bool) -> None:
        if compiled > bar.n:
            bar.update(compiled - bar.n)
        what = "compiled" if done else "compiling"
        bar.set_postfix_str(f"{what} {kernel.rsplit('.', 1)[-1]}")

    return bar, report_compile_progress(report, every_s=1.0)
