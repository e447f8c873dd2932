"""pytest collects cases/*.yaml × adapters through the harness plugin (see harness/pytest_plugin.py)."""

pytest_plugins = ["harness.pytest_plugin"]
