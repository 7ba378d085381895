"""Write the three intersphinx inventories this documentation links through.

The machines that build these docs (and CI) reach package registries only, not documentation
sites, so Sphinx cannot download ``objects.inv`` at build time. These small inventories hold the
names our pages and docstrings refer to, each pointing at its real public page. Regenerate after
adding a reference: ``python docs/_inventories/make_inventories.py`` (needs ``sphobjinv``).
"""

from __future__ import annotations

from pathlib import Path

import sphobjinv as soi

HERE = Path(__file__).resolve().parent

# (name, domain:role, uri relative to the project's root; "$" stands for the name)
PYTHON = [
    *[(n, "py:class", "library/functions.html#$") for n in (
        "bytes", "bytearray", "memoryview", "int", "str", "float", "bool", "dict", "list",
        "tuple", "set", "frozenset", "object", "type",
    )],
    *[(n, "py:exception", "library/exceptions.html#$") for n in (
        "Exception", "ValueError", "TypeError", "KeyError", "IndexError", "OSError",
        "TimeoutError", "ConnectionError", "ConnectionResetError", "RuntimeError",
        "UnicodeDecodeError", "RecursionError", "MemoryError", "EOFError", "ImportError",
        "ModuleNotFoundError", "NotImplementedError", "AttributeError", "OverflowError",
    )],
    ("None", "py:data", "library/constants.html#$"),
    ("enum.Enum", "py:class", "library/enum.html#$"),
    ("enum.IntEnum", "py:class", "library/enum.html#$"),
    ("enum.StrEnum", "py:class", "library/enum.html#$"),
    ("enum.IntFlag", "py:class", "library/enum.html#$"),
    ("typing.Protocol", "py:class", "library/typing.html#$"),
    ("typing.Generic", "py:class", "library/typing.html#$"),
    ("typing.Literal", "py:data", "library/typing.html#$"),
    ("typing.Any", "py:data", "library/typing.html#$"),
    ("typing.TypeAlias", "py:data", "library/typing.html#$"),
    ("typing.NamedTuple", "py:class", "library/typing.html#$"),
    ("collections.abc.Iterator", "py:class", "library/collections.abc.html#$"),
    ("collections.abc.Iterable", "py:class", "library/collections.abc.html#$"),
    ("collections.abc.Sequence", "py:class", "library/collections.abc.html#$"),
    ("collections.abc.Mapping", "py:class", "library/collections.abc.html#$"),
    ("collections.abc.Callable", "py:class", "library/collections.abc.html#$"),
    ("collections.abc.AsyncIterator", "py:class", "library/collections.abc.html#$"),
    ("collections.abc.Awaitable", "py:class", "library/collections.abc.html#$"),
    ("pathlib.Path", "py:class", "library/pathlib.html#$"),
    ("socket.socket", "py:class", "library/socket.html#$"),
    ("struct.Struct", "py:class", "library/struct.html#$"),
    ("uuid.UUID", "py:class", "library/uuid.html#$"),
    ("asyncio.Server", "py:class", "library/asyncio-eventloop.html#$"),
    ("asyncio.StreamReader", "py:class", "library/asyncio-stream.html#$"),
    ("asyncio.StreamWriter", "py:class", "library/asyncio-stream.html#$"),
    ("argparse.ArgumentParser", "py:class", "library/argparse.html#$"),
    ("argparse.Namespace", "py:class", "library/argparse.html#$"),
    ("json", "py:module", "library/json.html#module-$"),
    ("asyncio", "py:module", "library/asyncio.html#module-$"),
    ("doctest", "py:module", "library/doctest.html#module-$"),
    ("unittest", "py:module", "library/unittest.html#module-$"),
]
ATTRS = [
    ("attrs", "py:module", "api.html#module-$"),
    ("attrs.frozen", "py:function", "api.html#$"),
    ("attrs.define", "py:function", "api.html#$"),
    ("attrs.field", "py:function", "api.html#$"),
    ("attrs.evolve", "py:function", "api.html#$"),
    ("attrs.fields", "py:function", "api.html#$"),
    ("attrs.has", "py:function", "api.html#$"),
]
SPARK_API = "reference/pyspark.sql/api/$.html"
PYSPARK = [
    ("pyspark.sql.SparkSession", "py:class", SPARK_API),
    ("pyspark.sql.DataFrame", "py:class", SPARK_API),
    ("pyspark.sql.DataFrameReader", "py:class", SPARK_API),
    ("pyspark.sql.DataFrameReader.load", "py:method", SPARK_API),
    ("pyspark.sql.DataFrameReader.format", "py:method", SPARK_API),
    ("pyspark.sql.types.StructType", "py:class", SPARK_API),
    ("pyspark.sql.datasource.DataSource", "py:class", SPARK_API),
    ("pyspark.sql.datasource.DataSourceReader", "py:class", SPARK_API),
    ("pyspark.sql.datasource.InputPartition", "py:class", SPARK_API),
]


def write(filename: str, project: str, version: str, entries: list[tuple[str, str, str]]) -> None:
    """Write one compressed ``objects.inv`` for ``project`` holding ``entries``."""
    inventory = soi.Inventory()
    inventory.project = project
    inventory.version = version
    for name, role, uri in entries:
        domain, role_name = role.split(":")
        inventory.objects.append(
            soi.DataObjStr(name=name, domain=domain, role=role_name, priority="1", uri=uri,
                           dispname="-")
        )
    data = soi.compress(inventory.data_file(contract=True))
    soi.writebytes(str(HERE / filename), data)


if __name__ == "__main__":
    write("python.inv", "Python", "3", PYTHON)
    write("attrs.inv", "attrs", "stable", ATTRS)
    write("pyspark.inv", "PySpark", "latest", PYSPARK)
