"""A first start that compiles kernels says so: which kernel, how many so far, for how long;
a warm start (every kernel from the cache) reports nothing."""

import io

import numba
from numba.core import event

from hybridgw.compile_progress import CompileProgress, compile_bar, human_line, report_compile_progress


def test_a_compile_is_reported_when_done_and_a_cached_one_is_not():
    reports = []
    progress = report_compile_progress(lambda *state: reports.append(state), every_s=60)

    @numba.njit(cache=False)
    def triple_plus_one(x):
        return 3 * x + 1

    try:
        assert triple_plus_one(2) == 7
        ((kernel, compiled, elapsed_s, done),) = [r for r in reports if r[0].endswith("triple_plus_one")]
        assert done and compiled >= 1 and elapsed_s >= 0 and kernel.startswith(__name__)
        before = len(reports)
        assert triple_plus_one(5) == 16  # compiled already: no event
        assert len(reports) == before
    finally:
        event.unregister("numba:compile", progress)


class _Event:
    def __init__(self, function):
        self.data = {"dispatcher": type("D", (), {"py_func": function})()}


def test_a_long_compile_beats_every_interval_with_the_kernel_and_the_count():
    now = [100.0]
    reports = []
    progress = CompileProgress(lambda *state: reports.append(state), every_s=5, clock=lambda: now[0])

    def decode_layer():
        pass

    def helper():
        pass

    progress.on_start(_Event(decode_layer))
    progress.on_start(_Event(helper))  # a callee compiled inside it
    progress.on_end(_Event(helper))
    now[0] = 103.0
    progress.beat()
    assert reports == []  # 3 s: not yet
    now[0] = 106.0
    progress.beat()
    assert reports == [(f"{__name__}.{decode_layer.__qualname__}", 1, 6.0, False)]
    now[0] = 130.0
    progress.on_end(_Event(decode_layer))
    assert reports[-1][1:] == (2, 30.0, True)
    line = human_line(*reports[-1])
    assert "2 compiled, 30 s" in line and line.endswith("decode_layer")


def test_up_shows_a_childs_compiling_lines_and_nothing_else(capsys):
    from hybridgw.up_command import _show_progress

    line = '{"time": "t", "event": "compiling", "kernel": "edge.kernels.layers.embed", "compiled": 3, '
    _show_progress(line + '"elapsed_s": 12.4, "done": false}\n')
    _show_progress('{"time": "t", "event": "listening", "address": "127.0.0.1:1"}\n')
    _show_progress('{"event": "compiling", "broken"\n')
    shown = capsys.readouterr().err.splitlines()
    assert shown == [human_line("edge.kernels.layers.embed", 3, 12.4, False)]


def test_a_services_progress_line_is_the_one_up_shows(caplog, capsys):
    """A node or cloud worker logs its progress as JSON; `hybridgw up` turns that into the line."""
    import logging

    from hybridgw.compile_progress import log_compiling
    from hybridgw.up_command import _show_progress

    with caplog.at_level(logging.INFO, logger="hybridgw.cloud"):
        log_compiling("hybridgw.cloud")("cloud.kernels.paged_attention.paged_attention", 4, 6.04, True)
    (record,) = caplog.records
    _show_progress(record.getMessage())
    shown = capsys.readouterr().err.splitlines()
    assert shown == [human_line("cloud.kernels.paged_attention.paged_attention", 4, 6.0, True)]


def test_the_warm_commands_bar_counts_the_compiled_kernels_and_names_the_last():
    shown = io.StringIO()
    bar, progress = compile_bar("kernels for demo", file=shown)

    @numba.njit(cache=False)
    def double_minus_one(x):
        return 2 * x - 1

    try:
        with bar:
            assert bar.n == 0
            assert double_minus_one(4) == 7
            assert bar.n >= 1 and bar.postfix == "compiled double_minus_one"
            counted = bar.n
            assert double_minus_one(5) == 9  # compiled already: not counted again
            assert bar.n == counted
    finally:
        event.unregister("numba:compile", progress)
    assert "kernels for demo" in shown.getvalue() and f"{counted} kernels" in shown.getvalue()
