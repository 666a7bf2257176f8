"""Description versions: a question at t0 gets the text that existed at t0, through the store."""

from dataclasses import replace

import pytest

from hindcast.errors import LeakageError
from hindcast.markets.bundle import (
    DescriptionVersion,
    MarketBundle,
    MarketMeta,
    description_at,
    market_at,
)
from hindcast.markets.store import open_version, write_version
from hindcast.records import Market, PricePoint, Resolution
from tests.helpers import SAMPLE_MARKETS, at

ID = "0x" + "1" * 64
FIRST, CLARIFIED, AGAIN = (
    "Resolves Yes if X.",
    "Resolves Yes if X. Clarification: Y counts.",
    "… and Z.",
)


def bundle(descriptions=None, meta=None) -> MarketBundle:
    market = Market(
        ID, "Will X happen?", AGAIN if descriptions else FIRST, opened_at=at("2026-01-01T00:00:00")
    )
    resolution = Resolution(ID, "yes", at("2026-03-01T00:00:00"), at("2026-03-02T00:00:00"))
    prices = {ID: (PricePoint(at("2026-01-02T00:00:00"), 0.4),)}
    return MarketBundle((market,), (resolution,), prices, meta or {}, descriptions or {})


VERSIONS = {
    ID: (
        DescriptionVersion(FIRST),
        DescriptionVersion(CLARIFIED, at("2026-02-01T00:00:00")),
        DescriptionVersion(AGAIN, at("2026-02-10T12:00:00")),
    )
}


def test_the_version_in_force_at_t0_is_used_and_one_appearing_at_t0_is_not():
    b = bundle(VERSIONS)
    assert description_at(b, ID, at("2026-01-15T00:00:00")) == FIRST
    assert (
        description_at(b, ID, at("2026-02-01T00:00:00")) == FIRST
    )  # appeared exactly at t0: not yet
    assert description_at(b, ID, at("2026-02-01T00:00:01")) == CLARIFIED
    assert description_at(b, ID, at("2026-02-28T00:00:00")) == AGAIN
    assert market_at(b, ID, at("2026-01-15T00:00:00")).description == FIRST


def test_a_market_with_one_known_text_uses_it_at_any_t0():
    assert description_at(bundle(), ID, at("2026-01-01T00:00:01")) == FIRST


def test_no_text_known_before_t0_is_refused_not_replaced_by_a_later_one():
    late_only = {ID: (DescriptionVersion(CLARIFIED, at("2026-02-01T00:00:00")),)}
    with pytest.raises(
        LeakageError, match=f"market {ID}: no description known before 2026-01-15T00:00:00Z"
    ):
        description_at(bundle(late_only), ID, at("2026-01-15T00:00:00"))


def test_versions_and_metadata_round_trip_through_the_store(tmp_path):
    meta = {
        ID: MarketMeta(
            ID,
            "123",
            True,
            "Politics",
            ("Politics", "Trump"),
            "ev",
            ("No", "Yes"),
            1,
            "9" * 77,
            720,
        )
    }
    original = bundle(VERSIONS, meta)
    version_id = write_version(tmp_path, original)
    version = open_version(tmp_path)
    assert version.bundle.descriptions == VERSIONS and version.bundle.meta == meta
    assert (
        version.bundle.content_hash() == original.content_hash()
        and version_id == "m-" + original.content_hash()[:16]
    )
    assert description_at(version, ID, at("2026-02-05T00:00:00")) == CLARIFIED


def test_versions_and_metadata_change_the_version_id_and_their_absence_does_not():
    plain = bundle()
    assert (
        bundle(VERSIONS).content_hash() != replace(bundle(VERSIONS), descriptions={}).content_hash()
    )
    assert plain.content_hash() != bundle(meta={ID: MarketMeta(ID)}).content_hash()
    sample = open_version(
        SAMPLE_MARKETS
    )  # written before meta/descriptions existed: still opens, same id
    assert sample.bundle.meta == {} and sample.id == "m-" + sample.bundle.content_hash()[:16]


def test_descriptions_or_meta_of_unknown_markets_are_refused():
    with pytest.raises(ValueError, match="unknown market 0xnope"):
        replace(bundle(), descriptions={"0xnope": (DescriptionVersion("x"),)})
