"""numba kernels of the edge engine. Every kernel is `cache=True`; the parallel ones split the
output rows over all threads (`numba.set_num_threads`)."""

from shared.numba_cache import use_kernel_cache
from shared.openmp_spin import set_openmp_spin

set_openmp_spin()
use_kernel_cache()
