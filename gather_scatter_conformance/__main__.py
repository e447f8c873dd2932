"""``python -m harness``: see harness.cli."""

from gather_scatter_conformance.harness.cli import main

raise SystemExit(main())
