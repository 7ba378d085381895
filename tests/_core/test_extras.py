"""MissingExtra: a ModuleNotFoundError naming the feature, the missing module and the extra."""

from __future__ import annotations

from s3p_codec._core.extras import MissingExtra


def test_missing_extra_says_what_to_install_and_names_the_missing_module() -> None:
    error = MissingExtra("zstd", "zstd compression", "zstandard")
    assert isinstance(error, ModuleNotFoundError)
    assert str(error) == (
        "zstd compression needs the 'zstd' extra (zstandard is missing):"
        " pip install 's3p-codec[zstd]'"
    )
    assert error.name == "zstandard"
    assert error.extra == "zstd"
    assert type(error).__module__ == "s3p_codec._extras"
