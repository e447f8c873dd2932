"""Evidence for memory-unsafe findings: each one's repro script run under memory checkers (valgrind's memcheck,
Electric Fence, glibc's malloc checking), what they reported (``gsc memcheck``), and advisories written from the
findings and that evidence for a framework's security contact (``gsc advisories``). docs/memcheck.md."""
