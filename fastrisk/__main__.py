import sys

from fastrisk.cli import main

sys.exit(main())
