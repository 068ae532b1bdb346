"""Progress bars for long operations (pull, quantize, convert), on stderr so stdout stays clean."""

import sys

from tqdm import tqdm


def byte_progress(total: int, description: str, enabled: bool = True) -> tqdm:
    return tqdm(
        total=total,
        desc=description,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        file=sys.stderr,
        disable=not enabled,
        leave=False,
    )
