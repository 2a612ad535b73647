"""The explorer's version: the installed package's, or the source tree's when it was never installed."""
from importlib import metadata

try:
    __version__ = metadata.version("explorer")
except metadata.PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0.1.0"
