"""`make staging-test`: against the running staging (`make staging`), the smoke test, then faults
injected while streamed requests run. Exits 1 on the first failed check."""

import sys
import time

import faults
import smoke


def main() -> int:
    started = time.monotonic()
    print("staging smoke test")
    receipts = smoke.run()
    smoke_s = time.monotonic() - started
    print(f"smoke test passed in {smoke_s:.0f} s")
    if "--smoke" in sys.argv:
        return 0
    faults.run(receipts)
    print(f"staging test passed in {time.monotonic() - started:.0f} s (smoke {smoke_s:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
