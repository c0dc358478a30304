"""``python -m entropic_bound``: the ``entropic-bound`` command."""

import sys

from entropic_bound.cli.main import main

sys.exit(main())
