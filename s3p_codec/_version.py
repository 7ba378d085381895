"""The single place the package version lives (read by hatchling and by ``__version__``)."""

#: The package version (PEP 440).
__version__ = "0.1.0"
