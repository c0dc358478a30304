"""``python -m entropic_bound``: the ``entropic-bound`` command."""

import sys

from .cli import main

sys.exit(main())
