"""Roles and directions: each role's direction, and each direction's sender."""

from __future__ import annotations

import pytest

from s3p_codec._core.types import Direction, Role


@pytest.mark.parametrize(
    ("role", "direction"),
    [(Role.CLIENT, Direction.CLIENT_TO_SERVER), (Role.SERVER, Direction.SERVER_TO_CLIENT)],
)
def test_a_role_writes_the_bytes_of_its_own_direction(role: Role, direction: Direction) -> None:
    assert Direction.sent_by(role) is direction
    assert direction.sender is role
    assert direction.reverse is Direction.sent_by(role.peer)
