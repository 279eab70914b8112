import sys

from cfrkit.cli import main

sys.exit(main())
