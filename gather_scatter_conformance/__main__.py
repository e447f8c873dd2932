"""``python -m gather_scatter_conformance``, the same as the command ``gsc``: see harness.cli."""

from gather_scatter_conformance.harness.cli import main

raise SystemExit(main())
