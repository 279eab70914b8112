import os
import tempfile

# Compiled-tree disk cache of the test session goes to a private directory.
os.environ.setdefault("CFRKIT_CACHE", tempfile.mkdtemp(prefix="cfrkit-test-cache-"))
