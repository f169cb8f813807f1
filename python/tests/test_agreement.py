"""The long checks' agreement test (agreement.assert_same_mean) fails when it should."""

from __future__ import annotations

import pytest

from agreement import assert_same_mean


def test_same_mean_passes_within_the_spread() -> None:
    assert_same_mean([18858.3, 18863.6, 19520.0], [17955.3, 19471.8, 16963.2], "twin")


def test_same_mean_fails_on_a_shift() -> None:
    with pytest.raises(AssertionError, match="Welch 95 %"):
        assert_same_mean([18858.3, 18863.6, 19520.0], [14955.3, 15471.8, 14963.2], "shifted")


def test_no_spread_asks_for_equality() -> None:
    assert_same_mean([6197.666666666776] * 3, [6197.666666666776] * 3, "constant")
    # The same sums in another order: a spread of rounding alone is no disagreement.
    assert_same_mean([3098.833333333388, 3098.8333333333885, 3098.833333333388], [3098.8333333333876] * 3, "rounding")
    with pytest.raises(AssertionError, match="no spread"):
        assert_same_mean([6197.7] * 3, [6197.666666666776] * 3, "constant, shifted")
