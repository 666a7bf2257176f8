"""Every trap of docs/polymarket-api.md, read from fixtures in the exact Gamma/CLOB shapes."""

import json

import pytest

from hindcast.markets.parse import (
    MalformedMarket,
    MarketSkipped,
    parse_gamma_market,
    parse_history,
    resolution_status,
)
from hindcast.timeutil import UTC
from tests.helpers import at
from tests.markets.conftest import by_question, tokens


def parsed(fragment: str, **changes):
    return parse_gamma_market({**by_question(fragment), **changes})


def test_json_in_string_fields_are_decoded_and_token_ids_stay_text():
    raw = by_question("Marco Rubio")
    assert isinstance(raw["outcomes"], str) and isinstance(raw["clobTokenIds"], str)
    p = parse_gamma_market(raw)
    assert p.meta.outcomes == ("Yes", "No")
    assert p.meta.yes_token == json.loads(raw["clobTokenIds"])[0]
    assert isinstance(p.meta.yes_token, str) and len(p.meta.yes_token) >= 70


def test_both_closed_time_formats_and_microseconds_are_read_as_utc():
    raw = by_question("Marco Rubio")
    assert raw["closedTime"] == "2026-01-23 20:56:36+00" and raw["startDate"].endswith(".402931Z")
    p = parse_gamma_market(raw)
    assert p.resolution.known_at == at("2026-01-23T20:56:36")
    assert (
        p.market.opened_at == at("2026-01-02T17:04:11.402931") and p.market.opened_at.tzinfo == UTC
    )
    event_closed = raw["events"][0]["closedTime"]  # the ISO-with-Z form, inside events
    assert event_closed.endswith("Z")


def test_effective_resolution_is_the_earliest_evidence_and_known_at_the_latest():
    p = parsed("Marco Rubio")  # umaEndDate 20:56:30Z, closedTime 20:56:36, endDate Jan 31
    assert (p.resolution.resolved_at, p.resolution.known_at) == (
        at("2026-01-23T20:56:30"),
        at("2026-01-23T20:56:36"),
    )
    early = parsed("Acend")  # scheduled end 20:00, closed 21:41:59 after the game
    assert early.resolution.resolved_at == at("2026-01-20T20:00:00")


def test_a_missing_end_date_is_no_scheduled_close():
    raw = by_question("Bitcoin reach")
    assert "endDate" not in raw
    p = parse_gamma_market(raw)
    assert p.market.scheduled_close is None
    assert p.resolution.resolved_at == at("2026-02-01T00:10:05.113")


def test_labels_other_than_yes_no_make_outcome_0_the_yes_and_say_so():
    p = parsed("Acend")
    assert p.meta.outcomes == ("Acend", "Bebop") and p.meta.yes_index == 0
    assert p.market.question == "LoL: Acend vs Bebop (BO3) (YES = 'Acend', NO = 'Bebop')"
    assert p.resolution.status == "no"  # Bebop's final price is 1


def test_labels_no_yes_make_the_yes_token_the_second():
    raw = by_question("Sam Bankman-Fried")
    p = parse_gamma_market(raw)
    assert p.meta.yes_index == 1 and p.meta.yes_token == tokens(raw)[1]
    assert p.resolution.status == "yes" and p.market.question == raw["question"]


def test_a_final_price_of_0_9995_singles_out_the_winner():
    assert by_question("Bitcoin reach")["outcomePrices"] == '["0.0005", "0.9995"]'
    assert parsed("Bitcoin reach").resolution.status == "no"
    assert resolution_status([0.995, 0.005], 0) == "yes"


def test_fifty_fifty_is_recorded_as_such_never_as_0_or_1():
    r = parsed("emergency rate cut").resolution
    assert r.status == "fifty-fifty" and r.outcome is None


def test_final_prices_without_a_winner_are_ambiguous():
    r = parsed("50 bps").resolution
    assert r.status == "ambiguous" and r.outcome is None
    assert resolution_status([0.99, 0.99], 0) == "ambiguous"


def test_uma_statuses_lagging_behind_the_status_do_not_matter():
    raw = by_question("Marco Rubio")
    assert raw["umaResolutionStatus"] == "resolved" and "proposed" in raw["umaResolutionStatuses"]
    assert (
        parse_gamma_market({**raw, "umaResolutionStatuses": '["proposed"]'}).resolution.status
        == "yes"
    )


def test_a_market_uma_has_not_resolved_is_skipped_with_the_reason():
    with pytest.raises(MarketSkipped, match=r"not resolved \(umaResolutionStatus='proposed'\)"):
        parsed("GPT-6")


def test_an_open_market_is_skipped():
    with pytest.raises(MarketSkipped, match="not closed"):
        parsed("Greenland")


def test_a_non_binary_market_is_skipped_and_says_how_many_outcomes():
    with pytest.raises(MarketSkipped) as skip:
        parsed("Pro League")
    assert skip.value.reason == "not binary (3 outcomes)"


def test_volume_as_string_or_number_and_ints_where_floats_are_expected():
    raw = by_question("Sam Bankman-Fried")
    assert raw["volumeNum"] == 31337 and raw["bestAsk"] == 1
    assert parse_gamma_market(raw).market.volume == 31337.0
    no_num = {k: v for k, v in by_question("Marco Rubio").items() if k != "volumeNum"}
    assert parse_gamma_market(no_num).market.volume == 9999.995006


def test_unknown_keys_are_ignored():
    assert (
        parsed("Marco Rubio", someNewField={"x": [1]}, anotherOne=None).market
        == parsed("Marco Rubio").market
    )


def test_neg_risk_and_event_metadata_are_kept():
    p = parsed("Acend")
    assert p.meta.neg_risk is True and p.meta.category == "Sports"
    assert (
        p.meta.tags == ("Sports", "Esports", "League of Legends")
        and p.meta.event == "lol-acend-vs-bebop"
    )
    assert parsed("Marco Rubio").meta.neg_risk is False


def test_topic_comes_from_the_event_category_then_tags_then_keywords():
    assert parsed("Acend").market.topic == "sports"
    assert parsed("Bitcoin reach").market.topic == "crypto"  # empty category, tag "Crypto"
    assert parsed("emergency rate cut").market.topic == "economy"
    assert (
        parsed("GPT-6", umaResolutionStatus="resolved").market.topic == "tech"
    )  # no event: keyword rule


def test_source_fields_land_in_the_market_record():
    raw = by_question("Marco Rubio")
    m = parse_gamma_market(raw).market
    assert m.id == raw["conditionId"] and m.source == "polymarket" and m.slug == raw["slug"]
    assert (
        m.url == f"https://polymarket.com/market/{raw['slug']}"
        and m.description == raw["description"]
    )
    assert parse_gamma_market(raw).meta.source_id == "1237864"


def test_malformed_json_in_a_field_names_the_market():
    raw = by_question("Dow close above")
    with pytest.raises(MalformedMarket) as err:
        parse_gamma_market(raw)
    assert err.value.market_id == raw["conditionId"]
    assert str(err.value).startswith(
        f"market {raw['conditionId']}: outcomePrices is not valid JSON"
    )


@pytest.mark.parametrize(
    "change, message",
    [
        ({"conditionId": None}, r"market gamma id 1237864: conditionId must be a non-empty string"),
        ({"question": ""}, r"question must be a non-empty string"),
        ({"clobTokenIds": '["1", "2", "3"]'}, r"clobTokenIds has 3 tokens for 2 outcomes"),
        ({"clobTokenIds": "[1391, 5279]"}, r"clobTokenIds entry 1391 is not a decimal string"),
        ({"outcomePrices": '["1"]'}, r"outcomePrices has 1 prices for 2 outcomes"),
        ({"outcomePrices": '["one", "0"]'}, r"outcomePrices value 'one' is not a number"),
        ({"closedTime": "yesterday"}, r"closedTime 'yesterday' is not a timestamp"),
        ({"closedTime": None, "umaEndDate": None}, r"without closedTime or umaEndDate"),
        ({"outcomes": None}, r"outcomes must hold a JSON array"),
    ],
)
def test_malformed_fields_are_reported_precisely(change, message):
    with pytest.raises(MalformedMarket, match=message):
        parsed("Marco Rubio", **change)


def test_a_market_that_is_not_an_object_is_malformed():
    with pytest.raises(MalformedMarket, match="expected a JSON object, got list"):
        parse_gamma_market([1, 2])


def test_histories_become_sorted_points_and_exact_repeats_collapse():
    points = parse_history("m", [{"t": 20, "p": 0.5}, {"t": 10, "p": 0.25}, {"t": 20, "p": 0.5}])
    assert [(int(p.t.timestamp()), p.p) for p in points] == [(10, 0.25), (20, 0.5)]
    assert parse_history("m", []) == ()


@pytest.mark.parametrize(
    "history, message",
    [
        ([{"t": 10, "p": 0.2}, {"t": 10, "p": 0.3}], "two prices at"),
        ([{"t": "2026-01-05", "p": 0.4}], "is not unix seconds"),
        ([{"t": 10, "p": 1.5}], r"price 1.5 outside \[0, 1\]"),
        ([{"t": 10}], "missing field 'p'"),
        ({"t": 10, "p": 0.5}, "history must be a list"),
    ],
)
def test_malformed_histories_name_the_market(history, message):
    with pytest.raises(MalformedMarket, match=f"market 0xabc: price history: .*{message}"):
        parse_history("0xabc", history)
