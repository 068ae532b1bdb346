"""A child that `hybridgw up` starts dies with it, even when `up` is killed with SIGKILL and has
no chance to stop it: `up` passes its pid in HYBRIDGW_DIE_WITH_PARENT, and the child asks the
kernel for SIGTERM when its parent dies (Linux prctl PR_SET_PDEATHSIG), or else watches its
parent's pid. SIGTERM is the graceful stop every service already handles."""

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

ENV = "HYBRIDGW_DIE_WITH_PARENT"
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Call first thing in a child process; a no-op unless ENV names the parent."""
    expected = os.environ.get(ENV)
    if not expected or not expected.isdigit():
        return
    parent = int(expected)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    else:
        threading.Thread(target=_watch, args=(parent,), daemon=True, name="parent-watch").start()
    if os.getppid() != parent:  # it died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGTERM)
