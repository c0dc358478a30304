import os

import torch

# Tests are single-threaded so that timings and bitwise comparisons do not depend on load.
torch.set_num_threads(1)
os.environ.setdefault("OMP_NUM_THREADS", "1")
