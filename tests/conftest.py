import os

# The suite checks what runs measure: a record reused from the result cache (harness.run.cache) of an earlier
# session, or of another test's fake adapter, would hide that. The result cache's own tests name their directory.
os.environ.setdefault("GSC_RESULT_CACHE", "off")

pytest_plugins = ["pytester"]
