import sys

from hybridgw.main import main

sys.exit(main())
