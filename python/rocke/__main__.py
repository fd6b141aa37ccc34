"""python -m rocke run DIR/manifest.json --verify (see rocke/cli.py)."""
import sys

from .cli import main

sys.exit(main())
