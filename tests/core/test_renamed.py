"""Renamed keywords: the old name still works, warns with the new name, and never both."""

import inspect
import warnings

import pytest

from symq.core.errors import InvalidParameter
from symq.core.renamed import RenamedKeywordWarning, renamed_keywords


@renamed_keywords(service="sizes", law="sizes")
def scaled(lam: float, sizes: float = 1.0) -> float:
    return lam * sizes


def test_old_name_is_passed_as_the_new_one_with_a_warning():
    with pytest.warns(RenamedKeywordWarning, match=r"scaled\(service=\.\.\.\) is renamed "
                                                  r"scaled\(sizes=\.\.\.\)"):
        assert scaled(3.0, service=2.0) == 6.0


def test_new_name_gives_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert scaled(3.0, sizes=2.0) == 6.0
        assert scaled(3.0) == 3.0


def test_old_and_new_together_are_refused_naming_the_old():
    with pytest.raises(InvalidParameter, match="service") as info:
        scaled(1.0, service=2.0, sizes=2.0)
    assert info.value.name == "service"


def test_signature_shows_the_new_names_only():
    assert list(inspect.signature(scaled).parameters) == ["lam", "sizes"]


def test_the_warning_points_at_the_caller():
    with pytest.warns(RenamedKeywordWarning) as record:
        scaled(1.0, law=2.0)
    assert record[0].filename == __file__
