import os

import torch
from hypothesis import settings

# Tests are single-threaded so that timings and bitwise comparisons do not depend on load.
torch.set_num_threads(1)
os.environ.setdefault("OMP_NUM_THREADS", "1")

# Hypothesis: no per-example deadline. The machine is shared, so an example's wall time says
# nothing about correctness; every property still runs its full number of examples.
settings.register_profile("entropic-bound", deadline=None)
settings.load_profile("entropic-bound")
