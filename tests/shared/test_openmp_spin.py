"""The OpenMP spin count the edge kernels set before libgomp loads, unless the user set one."""

import os
import subprocess
import sys

import pytest

PROBE = "import edge.kernels, os; print(os.environ.get('GOMP_SPINCOUNT'))"


def _spin_count_after_import(**env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    result = subprocess.run(
        [sys.executable, "-c", PROBE], env={**environment, **env}, capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


def test_the_edge_kernels_set_a_short_spin_before_openmp_loads():
    from shared.openmp_spin import SPIN_COUNT

    assert _spin_count_after_import() == str(SPIN_COUNT)


@pytest.mark.parametrize(("variable", "expected"), [("GOMP_SPINCOUNT", "5"), ("OMP_WAIT_POLICY", "None")])
def test_a_users_own_setting_is_kept(variable, expected):
    assert (
        _spin_count_after_import(**{variable: "5" if variable == "GOMP_SPINCOUNT" else "ACTIVE"}) == expected
    )
