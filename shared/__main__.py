import sys

from shared.cli.main import main

sys.exit(main())
