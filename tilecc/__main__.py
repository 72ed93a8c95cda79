"""`python -m tilecc ...`: the same command line as the `tilecc` script."""

import sys

from tilecc.cli import main

sys.exit(main())
