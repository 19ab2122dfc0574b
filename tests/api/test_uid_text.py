"""UIDs and share IDs are formatted directly from the RNG's 128 bits; the text must be
exactly what uuid.UUID(int=bits, version=4) prints, or seeded outputs would change."""

from __future__ import annotations

import random
import uuid

from hypothesis import given
from hypothesis import strategies as st

from dralab.api.keys import random_uid, uid_text


@given(st.integers(min_value=0, max_value=(1 << 128) - 1))
def test_uid_text_is_uuid4_text(bits: int) -> None:
    assert uid_text(bits) == str(uuid.UUID(int=bits, version=4))


def test_random_uid_draws_128_bits() -> None:
    a, b = random.Random(7), random.Random(7)
    assert random_uid(a) == str(uuid.UUID(int=b.getrandbits(128), version=4))
    assert a.getstate() == b.getstate()
