"""Benchmarks of the harness against calling the frameworks directly (see benchmarks/README.md)."""
